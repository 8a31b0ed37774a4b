/**
 * Telling why a sandbox or discovery process died: V8's heap-limit abort
 * from any other death, and what its unanswered operations get.
 *
 * @module
 */

import type { SandboxOutcome } from "./types.ts";

/**
 * Whether a process's exit was V8's heap-limit abort. That abort is a
 * SIGTRAP (exit code 133 through a shell); the stderr check tells it from a
 * debugger trap, and the signal keeps code printing "out of memory" from
 * faking one.
 *
 * @param status how the process exited
 * @param stderrTail the end of what it wrote to stderr
 * @returns true when it ran out of memory
 * @example A heap-limit trap, and an exit that only says so
 * ```ts
 * import { ranOutOfMemory } from "./process_exit.ts";
 * import assert from "node:assert/strict";
 * const trap = { success: false, code: 133, signal: "SIGTRAP" as const };
 * assert.equal(ranOutOfMemory(trap, "Fatal JavaScript out of memory"), true);
 * const exit = { success: false, code: 1, signal: null };
 * assert.equal(ranOutOfMemory(exit, "out of memory"), false);
 * ```
 */
export function ranOutOfMemory(
  status: Deno.CommandStatus,
  stderrTail: string,
): boolean {
  return (status.signal === "SIGTRAP" || status.code === 133) &&
    /out of memory|heap limit/i.test(stderrTail);
}

/**
 * The outcome of the operations a sandbox process's death cut short.
 *
 * @param status how the process exited
 * @param stderrTail the end of what it wrote to stderr
 * @returns `out_of_memory`, or a retryable `sandbox_crash`
 * @example A crash is retryable
 * ```ts
 * import { exitOutcome } from "./process_exit.ts";
 * import assert from "node:assert/strict";
 * const crash = exitOutcome({ success: false, code: 1, signal: null }, "");
 * assert.equal(crash.code, "sandbox_crash");
 * assert.equal(crash.retryable, true);
 * ```
 */
export function exitOutcome(
  status: Deno.CommandStatus,
  stderrTail: string,
): SandboxOutcome & { ok: false } {
  return ranOutOfMemory(status, stderrTail)
    ? {
      ok: false,
      code: "out_of_memory",
      message: "Sandbox process ran out of memory",
      retryable: false,
    }
    : {
      ok: false,
      code: "sandbox_crash",
      message: `Sandbox process exited with code ${status.code}`,
      retryable: true,
    };
}
