/**
 * What one tool call produced, as a {@link ToolCallOutcome}: a refusal
 * before the code ran (bad arguments, configuration, permissions), or the
 * sandbox's outcome with the events the call collected. The toolkit's
 * secrets are scrubbed from all of it. Plain functions: each runs once per
 * call on the hot path and allocates only the outcome it returns.
 *
 * @module
 */

import { isOutput } from "../../protocol/output.ts";
import {
  type CallEvent,
  type ToolOutcome,
  toolOutcome,
} from "../../protocol/tool.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import type { SandboxOutcome } from "../sandbox/types.ts";
import type { ToolEntry } from "../registry/types.ts";
import { scrubSecrets } from "../toolkits/secrets.ts";

/** What a call produced. */
export interface ToolCallOutcome {
  /** The outcome (the codec encodes it as the wire's `ToolResult`). */
  result: ToolOutcome;
  /** The tool returned an `Output` with `break_loop: true` (agent loops stop). */
  breakLoop: boolean;
  /** The entry that ran: the version the call started with. */
  entry: ToolEntry;
}

/** The events a call collected, as its hooks hold them. */
export interface CollectedEvents {
  /** The events kept for the result. */
  readonly events: CallEvent[];
  /** Whether some were dropped past the bound. */
  readonly eventsCut: boolean;
}

/** No secrets to scrub (a call outside a toolkit, or before it resolved). */
export const NO_SECRETS: readonly string[] = Object.freeze([]);

/**
 * Scrubs secret values from a value; most toolkits hold no secret, and the
 * walk over the value is skipped then.
 *
 * @param value what leaves the host
 * @param secrets the values to hide
 * @returns the value, scrubbed (the same object when there is no secret)
 * @example Nothing to scrub returns the same object
 * ```ts
 * import { NO_SECRETS, scrub } from "./call_outcome.ts";
 * import assert from "node:assert/strict";
 * const value = { text: "hi" };
 * assert.equal(scrub(value, NO_SECRETS), value);
 * assert.equal(scrub("key s3cret", ["s3cret"]).includes("s3cret"), false);
 * ```
 */
export function scrub<T>(value: T, secrets: readonly string[]): T {
  return secrets.length === 0 ? value : scrubSecrets(value, secrets);
}

/**
 * Milliseconds since `started`, rounded, never negative.
 *
 * @param started a `performance.now()` reading
 * @returns the whole milliseconds elapsed
 * @example A start in the future counts as no time
 * ```ts
 * import { elapsed } from "./call_outcome.ts";
 * import assert from "node:assert/strict";
 * assert.equal(elapsed(performance.now() + 1000), 0);
 * ```
 */
export function elapsed(started: number): number {
  return Math.max(0, Math.round(performance.now() - started));
}

/**
 * A call refused before its code ran: a failed result, never `breakLoop`.
 *
 * @param entry the tool
 * @param code the result's `errorCode`
 * @param error the sentence saying why (scrubbed of `secrets`)
 * @param secrets the toolkit's secret values
 * @param started when the call started (`performance.now()`)
 * @returns the outcome
 * @example A schema violation
 * ```ts
 * import { failure, NO_SECRETS } from "./call_outcome.ts";
 * import type { ToolEntry } from "../registry/types.ts";
 * import assert from "node:assert/strict";
 * const entry = { name: "add" } as ToolEntry;
 * const out = failure(entry, "schema_violation", "Bad", NO_SECRETS, performance.now());
 * assert.equal(out.result.success, false);
 * assert.equal(out.result.errorCode, "schema_violation");
 * assert.equal(out.breakLoop, false);
 * ```
 */
export function failure(
  entry: ToolEntry,
  code: string,
  error: string,
  secrets: readonly string[],
  started: number,
): ToolCallOutcome {
  return {
    result: toolOutcome({
      success: false,
      toolName: entry.name,
      error: scrub(error, secrets),
      errorCode: code,
      durationMs: elapsed(started),
    }),
    breakLoop: false,
    entry,
  };
}

/**
 * What a sandbox that threw instead of answering stands for: it promises
 * not to throw for the code's failures, so a throw means the sandbox broke.
 *
 * @param error what it threw
 * @returns a failed, retryable outcome (`sandbox_crash` unless the error
 *   carries its own code)
 * @example A throw is a retryable crash
 * ```ts
 * import { sandboxBroke } from "./call_outcome.ts";
 * import assert from "node:assert/strict";
 * const outcome = sandboxBroke(new Error("gone"));
 * assert.ok(!outcome.ok && outcome.code === "sandbox_crash" && outcome.retryable);
 * ```
 */
export function sandboxBroke(error: unknown): SandboxOutcome {
  return {
    ok: false,
    code: error instanceof SkillboxError ? error.code : "sandbox_crash",
    message: error instanceof Error ? error.message : String(error),
    retryable: true,
  };
}

/**
 * A call that ran: the sandbox's outcome and the events the call collected,
 * scrubbed; `breakLoop` when the tool returned an `Output` asking for it.
 *
 * @param entry the tool that ran
 * @param outcome what the sandbox answered
 * @param collected the call's events
 * @param secrets the toolkit's secret values
 * @param started when the call started (`performance.now()`)
 * @returns the outcome
 * @example A plain value becomes the result's data
 * ```ts
 * import { NO_SECRETS, ranOutcome } from "./call_outcome.ts";
 * import type { ToolEntry } from "../registry/types.ts";
 * import assert from "node:assert/strict";
 * const entry = { name: "add" } as ToolEntry;
 * const out = ranOutcome(entry, { ok: true, value: 4, truncated: false },
 *   { events: [], eventsCut: false }, NO_SECRETS, performance.now());
 * assert.equal(out.result.data, 4);
 * assert.equal(out.breakLoop, false);
 * ```
 */
export function ranOutcome(
  entry: ToolEntry,
  outcome: SandboxOutcome,
  collected: CollectedEvents,
  secrets: readonly string[],
  started: number,
): ToolCallOutcome {
  return {
    result: scrub(
      toResult(
        entry.name,
        outcome,
        collected.events,
        collected.eventsCut,
        started,
      ),
      secrets,
    ),
    breakLoop: outcome.ok && isOutput(outcome.value) &&
      outcome.value.break_loop === true,
    entry,
  };
}

function toResult(
  name: string,
  outcome: SandboxOutcome,
  events: CallEvent[],
  eventsCut: boolean,
  started: number,
): ToolOutcome {
  if (!outcome.ok) {
    return toolOutcome({
      success: false,
      toolName: name,
      error: outcome.message,
      errorCode: outcome.code,
      durationMs: elapsed(started),
      truncated: eventsCut,
      events,
    });
  }
  const value = outcome.value;
  if (isOutput(value)) {
    return toolOutcome({
      success: true,
      toolName: name,
      data: value.data ?? null,
      summary: value.summary ?? null,
      exitCode: typeof value.exit_code === "number" ? value.exit_code : null,
      durationMs: elapsed(started),
      truncated: outcome.truncated || eventsCut,
      events,
    });
  }
  return toolOutcome({
    success: true,
    toolName: name,
    data: value ?? null,
    durationMs: elapsed(started),
    truncated: outcome.truncated || eventsCut,
    events,
  });
}
