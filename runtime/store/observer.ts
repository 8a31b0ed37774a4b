/**
 * The run observer: the one interface through which the tool caller and the
 * skill runner report every tool call and skill run (over any transport or
 * the embedding API) to the run history, the metrics and the console's live
 * view. Calls are synchronous and cheap: an observer only queues work.
 *
 * @module
 */

import type { SessionScope } from "../capability.ts";
import type { CallEvent } from "../../protocol/tool.ts";
import type { StoredFile } from "./store.ts";

/** What is known when a run starts. */
export interface RunStart {
  /** A tool call or a skill run. */
  kind: "tool" | "skill";
  /** The tool's or skill's name, as asked for. */
  name: string;
  /** The session it runs for. */
  session: SessionScope;
  /** The arguments as given (the observer redacts and caps them). */
  args: unknown;
  /** The run this one is part of (a skill's tool call), or null. */
  parentId?: string | null;
}

/** How a run ended. */
export interface RunEnd {
  /** `"ok"` or the A2E error code. */
  outcome: string;
  /** The error message, or null. */
  error?: string | null;
  /** The result's data (the observer redacts and caps it). */
  result?: unknown;
  /** The result's summary, or null. */
  summary?: unknown;
  /** The tool's toolkit, when known. */
  toolkit?: string | null;
  /** Values to scrub from everything kept about this run (toolkit secrets). */
  secrets?: readonly string[];
}

/**
 * Receives runs as they start, emit events and finish. Implementations must
 * not throw and must not block: the call path does not await them.
 */
export interface RunObserver {
  /**
   * A run started.
   *
   * @returns the run's id, passed back to {@link event} and {@link finished}
   */
  started(start: RunStart): string;
  /** The run emitted an event (already numbered). */
  event(runId: string, event: CallEvent): void;
  /** The run ended; called exactly once per {@link started}. */
  finished(runId: string, end: RunEnd): void;
  /**
   * Where a run's files go (a skill script's workspace), when runs are
   * kept with their files; absent or null: files are not kept.
   */
  readonly files?: RunFiles | null;
}

/** Keeps files with a run's record, within caps per run. */
export interface RunFiles {
  /** Most bytes of content kept per run, all files together. */
  readonly maxBytes: number;
  /** Most files listed per run (kept or not). */
  readonly maxFiles: number;
  /**
   * Attaches files to a run still in progress (past the caps they are
   * listed without content, or counted); `unlisted` more were left out.
   *
   * @returns what was kept
   */
  attach(
    runId: string,
    files: readonly StoredFile[],
    unlisted?: number,
  ): { files: number; bytes: number; truncated: boolean };
}

/**
 * Outcome of an error thrown by a call path: its A2E code, else
 * `runtime_error`.
 *
 * @param error what was thrown
 * @returns the outcome and message for {@link RunEnd}
 * @example
 * ```ts
 * import { errorEnd } from "./observer.ts";
 * import { SkillboxError } from "../../protocol/errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(errorEnd(new SkillboxError("unknown_tool", "no")).outcome, "unknown_tool");
 * assert.equal(errorEnd("boom").outcome, "runtime_error");
 * ```
 */
export function errorEnd(error: unknown): RunEnd {
  const code = typeof error === "object" && error !== null &&
      "code" in error && typeof error.code === "string"
    ? error.code
    : "runtime_error";
  return {
    outcome: code,
    error: error instanceof Error ? error.message : String(error),
  };
}
