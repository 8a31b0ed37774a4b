/**
 * The host side of code mode (`run_code`, issue 25): the calls the code
 * makes through its `tools` and `skills` globals. The sandbox only names a
 * tool (or `skills/<name>`) and its arguments on the `tool` RPC of its own
 * operation; everything else is bound here, by the host, from the
 * `run_code` call itself: the session, the parent run, the deadline and the
 * signal. The tool caller sends the shipped `run_code`'s calls here
 * ({@link CodeCalls} is a hosted tool); a drop-in of that name is a plain
 * tool, refused `ctx.tools` as every tool is. Each inner call then takes
 * the path a `tool/call/req` of that session takes: the token's rate quota
 * and the call slots (the dispatcher's `admitInner`), then the observed
 * tool caller (policy, token restrictions, argument validation, the
 * session's toolkit configuration, grant, sandbox, run history as a child
 * run of the `run_code` run).
 *
 * @module
 */

import type { HostedCall, HostedTool, ToolCaller } from "../tools/call.ts";
import type { SandboxOutcome } from "../sandbox/types.ts";
import type { SessionScope } from "../capability.ts";
import type { CallEvent } from "../../protocol/tool.ts";
import { type Release, Semaphore } from "../slots.ts";
import { toWireError } from "../../protocol/errors.ts";

/** The code-mode tool's name: it never runs as an inner call. */
export const CODE_TOOL = "run_code";

// How the sandbox names a skill on the `tool` RPC: `skills/<name>`
// (skills/code/run_code.ts).
const SKILL_PREFIX = "skills/";

// `code.max_calls`' default.
const DEFAULT_MAX_CALLS = 1000;

// An inner call may outlive its run_code's deadline by this much: the
// run_code call's own timeout then always fires first and aborts it (the
// two deadlines coinciding, either could fire first).
const DEADLINE_GRACE_MS = 1000;

// How far under the bound a cut result's JSON may end: the cut stops
// before a character whose escape (`\u0001`, six characters) would pass
// it, and the string's two quotes count here.
const CUT_WINDOW = 6;

// A tool's own events that become events of the `run_code` call.
const RELAYED = new Set(["progress", "status", "log"]);

/** Takes the call slots of one inner call (the dispatcher's `admitInner`). */
export type InnerAdmission = (
  session: SessionScope,
  slot: { lent: Semaphore; signal: AbortSignal },
) => Promise<Release>;

/** One tool or skill call the code made, bound to its `run_code` call. */
export interface InnerRequest {
  /** The tool's name, or the skill's (without `skills/`). */
  name: string;
  args: Record<string, unknown>;
  session: SessionScope;
  signal: AbortSignal;
  timeoutSeconds: number;
  /** The `run_code` run: the call's run is its child. */
  parentRunId?: string;
  /** The call's events; the progress, status and log ones are relayed. */
  onEvent: (kind: string, data: Record<string, unknown>) => void;
}

/**
 * What one inner call got: the data, and whether the host cut the result
 * (or its events) to its bounds, as `ToolOutcome.truncated` says.
 */
export interface InnerSuccess {
  ok: true;
  data: unknown;
  /** The outcome was `truncated`. @default false */
  cut?: boolean;
  /**
   * Some of its events were dropped, so `cut` may be theirs alone.
   * @default false
   */
  eventsCut?: boolean;
}

/** Runs a published skill for an inner call; throws A2E errors. */
export type InnerSkillRunner = (
  request: InnerRequest,
) => Promise<InnerSuccess | InnerFailure>;

/** A failed inner call. */
export interface InnerFailure {
  ok: false;
  code: string;
  message: string;
}

/** What the sandbox gets back for one inner call (never a throw). */
export type InnerAnswer =
  | { ok: true; data: unknown; duration_ms: number }
  | { ok: false; code: string; message: string; duration_ms: number };

/** Options of {@link CodeCalls}. */
export interface CodeCallsOptions {
  /** Inner calls one run may make (`code.max_calls`). @default 1000 */
  maxCalls?: number;
  /**
   * The most characters of JSON one inner result may carry back (the
   * unit `sandbox.max_result_bytes` counts everywhere). @default 1048576
   */
  maxResultBytes?: number;
  /** Rate quota and call slots. @default none: inner calls share no limit */
  admit?: InnerAdmission;
  /** Runs skills. @default none: `skills.*` is refused */
  skills?: InnerSkillRunner;
}

/** One `run_code` call, as the host knows it. */
export interface CodeRun {
  /** The observed tool caller (the one `tool/call/req` uses). */
  caller: ToolCaller;
  /** The session the call runs for. */
  session: SessionScope;
  /** The `run_code` call's run, parent of every inner call's run. */
  runId?: string;
  /** Milliseconds the `run_code` call may run. */
  timeoutMs: number;
  /** Events of the `run_code` call (the relayed inner events go here). */
  onEvent(kind: string, data: Record<string, unknown>): void;
}

/** The inner-call function of one run: what the `tool` RPC reaches. */
export type InnerCall = (
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<InnerAnswer>;

/**
 * The inner calls of `run_code` runs: the hosted tool the tool caller runs
 * the shipped `run_code`'s calls through.
 *
 * @example A run's calls go through the caller, with the run as parent
 * ```ts
 * import { CodeCalls } from "./inner_calls.ts";
 * import assert from "node:assert/strict";
 * const seen: unknown[] = [];
 * const caller = { call: (req: { name: string; parentRunId?: string }) => {
 *   seen.push([req.name, req.parentRunId]);
 *   return Promise.resolve({ breakLoop: false, entry: {} as never,
 *     result: { success: true, data: 2, toolName: req.name, truncated: false, events: [] } as never });
 * } };
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * const call = new CodeCalls({ maxCalls: 1 }).open({
 *   caller: caller as never, session, runId: "r1", timeoutMs: 1000, onEvent() {},
 * });
 * const signal = new AbortController().signal;
 * assert.equal((await call("add", {}, signal)).ok, true);
 * assert.deepEqual(seen, [["add", "r1"]]);
 * const over = await call("add", {}, signal);
 * assert.equal(over.ok, false);
 * ```
 */
export class CodeCalls implements HostedTool {
  readonly #maxCalls: number;
  readonly #maxResultBytes: number;
  readonly #admit: InnerAdmission | null;
  readonly #skills: InnerSkillRunner | null;

  /** @param options limits, admission and the skill runner */
  constructor(options: CodeCallsOptions = {}) {
    this.#maxCalls = options.maxCalls ?? DEFAULT_MAX_CALLS;
    this.#maxResultBytes = options.maxResultBytes ?? 1024 * 1024;
    this.#admit = options.admit ?? null;
    this.#skills = options.skills ?? null;
  }

  /**
   * Runs one call of the shipped `run_code` in the caller's sandbox, its
   * `ctx.tools` bound to that call's inner calls.
   *
   * @param hosted the call, its hooks and request, the caller and sandbox
   * @returns the sandbox's outcome
   */
  run(hosted: HostedCall): Promise<SandboxOutcome> {
    const { call, hooks, request } = hosted;
    hooks.inner = this.open({
      caller: hosted.caller,
      session: request.session,
      runId: request.runId,
      timeoutMs: call.timeoutMs,
      onEvent: (kind, data) => hooks.onEvent(kind, data),
    });
    return hosted.sandbox.call(call, hooks);
  }

  /**
   * The inner-call function of one `run_code` call. Everything that says
   * who calls comes from `run`; the sandbox gives a name and arguments.
   *
   * @param run the `run_code` call
   * @returns the function its `tool` RPC calls
   */
  open(run: CodeRun): InnerCall {
    const deadline = performance.now() + run.timeoutMs + DEADLINE_GRACE_MS;
    const lent = new Semaphore(1);
    let calls = 0;
    return async (name, args, signal) => {
      const t0 = performance.now();
      const took = () => Math.round(performance.now() - t0);
      const refusal = ++calls > this.#maxCalls
        ? {
          code: "runtime_error",
          message:
            `Cannot call "${name}": this run_code already made ${this.#maxCalls} inner calls (code.max_calls)`,
        }
        : name === CODE_TOOL
        ? {
          code: "tool_denied",
          message: `Cannot call "${CODE_TOOL}" from code run by ${CODE_TOOL}`,
        }
        // The sandbox passes any object as the arguments; the wire takes
        // only a plain object (`arguments: []` is refused there), and so a
        // tool or skill whose input schema is open would get an array only
        // from here.
        : Array.isArray(args)
        ? {
          code: "schema_violation",
          message:
            `Invalid arguments for "${name}": they must be an object, not an array`,
        }
        : null;
      if (refusal) return { ok: false, ...refusal, duration_ms: took() };
      let release: Release | undefined;
      try {
        signal.throwIfAborted();
        release = this.#admit
          ? await this.#admit(run.session, { lent, signal })
          : undefined;
        const request = {
          args,
          session: run.session,
          signal,
          timeoutSeconds: Math.max(
            0.001,
            (deadline - performance.now()) / 1000,
          ),
          parentRunId: run.runId,
          // Once run_code has answered (the signal aborts then) its events
          // are closed: a late event of an aborted inner call is dropped.
          onEvent: (kind: string, data: Record<string, unknown>) => {
            if (!signal.aborted && RELAYED.has(kind)) {
              run.onEvent(kind, { ...data, tool: name });
            }
          },
        };
        const outcome = name.startsWith(SKILL_PREFIX)
          ? await this.#skill({
            ...request,
            name: name.slice(SKILL_PREFIX.length),
          })
          : await this.#tool(run.caller, { ...request, name });
        return outcome.ok
          ? this.#bounded(name, outcome, took())
          : { ...outcome, duration_ms: took() };
      } catch (error) {
        const { code, message } = toWireError(error);
        return { ok: false, code, message, duration_ms: took() };
      } finally {
        release?.();
      }
    };
  }

  async #tool(
    caller: ToolCaller,
    request: InnerRequest,
  ): Promise<InnerSuccess | InnerFailure> {
    let seen = 0;
    const { result, entry } = await caller.call({
      ...request,
      onEvent: (event: CallEvent) => {
        seen++;
        request.onEvent(event.kind, event.data);
      },
    });
    return result.success
      ? {
        ok: true,
        data: result.data,
        // The importer cuts to a string of the bound, whose JSON is over
        // it, and flags a left-out artifact too: the size tells its cuts.
        cut: result.truncated && entry.origin !== "mcp",
        eventsCut: seen > result.events.length,
      }
      : {
        ok: false,
        code: result.errorCode ?? "tool_error",
        message: result.error ?? `Tool "${request.name}" failed`,
      };
  }

  #skill(request: InnerRequest): Promise<InnerSuccess | InnerFailure> {
    return this.#skills?.(request) ?? Promise.resolve({
      ok: false,
      code: "unknown_skill",
      message: `Cannot call skill "${request.name}": this host runs no skills`,
    });
  }

  // The answer goes to the sandbox as one frame: a result past the bound is
  // refused whole (a cut JSON value would be a different value). The
  // sandbox already cut a tool's result to the bound (an output()'s data
  // may become its JSON text, far under it): a result flagged truncated
  // whose events are whole was cut. When events were dropped too the flag
  // may be theirs, and only the size tells: before a character that takes
  // six as JSON (`\u0001`) a cut string's JSON ends a little under the
  // bound, within CUT_WINDOW of it.
  #bounded(name: string, outcome: InnerSuccess, ms: number): InnerAnswer {
    const { data } = outcome;
    const size = data === undefined ? 0 : JSON.stringify(data)?.length ?? 0;
    const bound = outcome.cut !== true
      ? this.#maxResultBytes
      : outcome.eventsCut === true
      ? this.#maxResultBytes - CUT_WINDOW
      : -1;
    if (size > bound) {
      return {
        ok: false,
        code: "tool_error",
        message: size > this.#maxResultBytes
          ? `Cannot return the result of "${name}" to the code: ${size} characters of JSON is over the bound of ${this.#maxResultBytes} (sandbox.max_result_bytes)`
          : `Cannot return the result of "${name}" to the code: it was cut to the bound of ${this.#maxResultBytes} characters of JSON (sandbox.max_result_bytes)`,
        duration_ms: ms,
      };
    }
    return { ok: true, data: data ?? null, duration_ms: ms };
  }
}
