/**
 * A fake `ctx` for calling a tool's `run` in-process in tests: it records
 * every event instead of relaying it to a host.
 *
 * @module
 */

import type {
  Context,
  FetchRequest,
  FetchResponse,
  LogLevel,
} from "../../sandbox/sdk/types.ts";

/** One event a tool emitted through the fake ctx. */
export type RecordedEvent =
  | { kind: "progress"; pct: number; message?: string }
  | { kind: "status"; message: string }
  | { kind: "log"; level: LogLevel; message: string }
  | { kind: "artifact"; name: string; mime: string; bytes: Uint8Array };

/** A fake ctx and what the tool sent through it. */
export interface TestCtx {
  ctx: Context;
  events: RecordedEvent[];
  /** The `log` events' messages at one level, in order. */
  logs(level: LogLevel): string[];
}

/**
 * Builds a fake ctx with the given toolkit config and abort signal.
 *
 * @param config what the tool sees as `ctx.config`
 * @param signal aborts the call; a fresh never-aborted signal by default
 * @param fetch what `ctx.fetch` does (a real egress broker in the http
 * tests); refuses by default
 * @returns the ctx and the list its events land in
 */
export function makeCtx(
  config: Record<string, unknown> = {},
  signal: AbortSignal = new AbortController().signal,
  fetch: (request: FetchRequest) => Promise<FetchResponse> = () =>
    Promise.reject(new Error("No egress in the test ctx")),
): TestCtx {
  const events: RecordedEvent[] = [];
  const ctx: Context = {
    progress: (pct, message) => events.push({ kind: "progress", pct, message }),
    status: (message) => events.push({ kind: "status", message }),
    log: (level, message) => events.push({ kind: "log", level, message }),
    artifact: (name, mime, bytes) =>
      events.push({
        kind: "artifact",
        name,
        mime,
        bytes: typeof bytes === "string"
          ? new TextEncoder().encode(bytes)
          : bytes,
      }),
    tools: {
      call: () => Promise.reject(new Error("No tools in the test ctx")),
    },
    llm: { chat: () => Promise.reject(new Error("No LLM in the test ctx")) },
    fetch,
    config,
    metadata: {},
    signal,
    session: "test-session",
    call: "test-call",
  };
  return {
    ctx,
    events,
    logs: (level) =>
      events.flatMap((e) =>
        e.kind === "log" && e.level === level ? [e.message] : []
      ),
  };
}

/**
 * Unwraps what `run` returned: the `data` of an output marker, or the value.
 *
 * @param value what `run` returned
 * @returns the result data, typed as the test expects
 */
export function dataOf<T = Record<string, unknown>>(value: unknown): T {
  const v = value as { __skillbox_output?: boolean; data?: unknown };
  return (v && v.__skillbox_output === true ? v.data : v) as T;
}
