import assert from "node:assert/strict";
import { ranOutOfMemory, sandboxCommand } from "./spawn.ts";

Deno.test("sandboxCommand() passes only the environment the grant names", () => {
  Deno.env.set("SKILLBOX_SPAWN_SECRET", "s3cret");
  Deno.env.set("SKILLBOX_SPAWN_OK", "fine");
  try {
    const plain = sandboxCommand({
      flags: [],
      grant: {},
      memoryMb: 64,
      cwd: "/",
    });
    assert.equal(plain.env.SKILLBOX_SPAWN_SECRET, undefined);
    assert.equal(plain.env.PATH, undefined);
    const granted = sandboxCommand({
      flags: [],
      grant: { env: ["SKILLBOX_SPAWN_OK"], run: ["git"] },
      memoryMb: 64,
      cwd: "/",
    });
    assert.equal(granted.env.SKILLBOX_SPAWN_OK, "fine");
    assert.equal(granted.env.SKILLBOX_SPAWN_SECRET, undefined);
    assert.equal(granted.env.PATH, Deno.env.get("PATH"));
  } finally {
    Deno.env.delete("SKILLBOX_SPAWN_SECRET");
    Deno.env.delete("SKILLBOX_SPAWN_OK");
  }
});

Deno.test("sandboxCommand() never allows everything or remote modules", () => {
  const cmd = sandboxCommand({
    flags: ["--allow-net=x.io"],
    grant: {},
    memoryMb: 64,
    cwd: "/tmp",
  });
  assert.ok(!cmd.args.some((a) => a === "-A" || a === "--allow-all"));
  assert.ok(cmd.args.includes("--cached-only"));
  assert.ok(
    cmd.args.includes("--v8-flags=--max-old-space-size=64,--single-threaded"),
  );
  // No config: the host project's deno.json never applies inside.
  assert.ok(cmd.args.includes("--no-config"));
  assert.match(cmd.args.at(-1)!, /sandbox\/process\/main\.ts$/);
  assert.equal(cmd.cwd, "/tmp");
});

const trap: Deno.CommandStatus = {
  success: false,
  code: 133,
  signal: "SIGTRAP",
};

Deno.test("a heap-limit abort is out of memory; a trap or an exit without the message is not", () => {
  assert.equal(
    ranOutOfMemory(trap, "<--- JS stacktrace --->\nheap limit"),
    true,
  );
  assert.equal(
    ranOutOfMemory(
      { success: false, code: 1, signal: "SIGTRAP" },
      "Out Of Memory",
    ),
    true,
  );
  assert.equal(ranOutOfMemory(trap, "Trace/breakpoint trap"), false);
  // A skill printing the words and exiting does not fake one.
  assert.equal(
    ranOutOfMemory({ success: false, code: 1, signal: null }, "out of memory"),
    false,
  );
  assert.equal(
    ranOutOfMemory(
      { success: false, code: 137, signal: "SIGKILL" },
      "heap limit",
    ),
    false,
  );
});
