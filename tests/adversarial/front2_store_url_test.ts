/**
 * A store URL the database driver cannot read (a password holding a "/"
 * or a "?", not percent-encoded) made the host throw at start, and the
 * driver's error was held by the store's guard against its stray errors:
 * the CLI exited 0 without a word. It now says why, password hidden, and
 * exits 1.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { HOST_FLAGS, HOST_MAIN } from "../support/host_cli.ts";

Deno.test("the CLI refuses a store URL its driver cannot read, exit 1, password hidden", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const config = join(dir, "skillbox.jsonc");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        store: { url: "postgres://skillbox:pa/ss-word@127.0.0.1:1/runs" },
        builtin_skills: false,
        skills: [],
        listen: { port: 0 },
      }),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...HOST_FLAGS, HOST_MAIN, "--config", config],
      cwd: dir,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, stderr);
    assert.match(
      stderr,
      /^skillbox: cannot start: .*postgres:\/\/…@127\.0\.0\.1:1\/runs/m,
    );
    assert.ok(!stderr.includes("ss-word"), stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
