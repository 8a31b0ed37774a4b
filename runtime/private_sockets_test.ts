import assert from "node:assert/strict";
import { dirname } from "node:path";
import { privateSocketPath } from "./private_sockets.ts";

Deno.test("socket paths are fresh, short enough for a Unix socket, in one folder only the host can enter", async () => {
  const a = privateSocketPath();
  const b = privateSocketPath();
  assert.notEqual(a, b);
  assert.equal(dirname(a), dirname(b));
  // sun_path holds 108 bytes, its terminating NUL included.
  assert.ok(new TextEncoder().encode(a).length < 108, a);
  const info = await Deno.stat(dirname(a));
  assert.ok(info.isDirectory);
  if (Deno.build.os !== "windows") assert.equal(info.mode! & 0o777, 0o700);
  const listener = Deno.listen({ transport: "unix", path: a });
  listener.close();
});

Deno.test("the folder is made again when something removed it (a /tmp cleaner on a long-running host)", async () => {
  const before = dirname(privateSocketPath());
  await Deno.remove(before, { recursive: true });
  const path = privateSocketPath();
  const info = await Deno.stat(dirname(path));
  assert.ok(info.isDirectory);
  if (Deno.build.os !== "windows") assert.equal(info.mode! & 0o777, 0o700);
  const listener = Deno.listen({ transport: "unix", path });
  listener.close();
});
