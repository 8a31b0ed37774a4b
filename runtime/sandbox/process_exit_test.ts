import assert from "node:assert/strict";
import { ranOutOfMemory } from "./process_exit.ts";

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
