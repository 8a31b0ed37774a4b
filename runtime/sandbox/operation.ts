/**
 * One operation's lifecycle on a sandbox process: send it, relay its events
 * and `ctx` RPCs to the host's hooks, bound it with a deadline, stop it on
 * cancel, and after a stop keep new work off the process until its worker
 * acknowledges (or taint the process so it is killed once idle).
 *
 * @module
 */

import { unwatchAbort, watchAbort } from "../abort_watch.ts";
import type { ErrorCode } from "../../protocol/codes.ts";
import type { OpMessage, RpcMethod } from "../../protocol/sandbox/messages.ts";
import type { FetchRequest } from "../../protocol/egress.ts";
import type { ChatRequest } from "../../protocol/chat.ts";
import type { OpHandlers, SandboxProcess } from "./_process.ts";
import type { ProcessRouter } from "./router.ts";
import type { Deadlines, Expiring } from "./deadlines.ts";
import type { SandboxHooks, SandboxOutcome } from "./types.ts";

// How long a worker may take to answer an abort before its process is
// treated as spinning and killed.
const ABORT_ACK_MS = 200;

/** Options of {@link runOperation}. */
export interface OperationOptions {
  /** Wall-clock limit in milliseconds. */
  timeoutMs: number;
  /** Where events and RPCs go; null refuses RPCs and drops events. */
  hooks: SandboxHooks | null;
  /** The router that owns the process. */
  router: ProcessRouter;
  /** The timer the deadline is kept on. */
  deadlines: Deadlines;
  /**
   * After a timeout or cancel: told whether the worker acknowledged the
   * abort (the process is back in service) or not (it is tainted).
   */
  onStopped?: (acknowledged: boolean) => void;
}

/**
 * Runs one operation on a leased process and resolves with its outcome;
 * never rejects.
 *
 * @param proc the process, leased for this operation
 * @param message the operation
 * @param options its deadline, its hooks (null: no events, RPCs refused),
 *   and the router that owns the process
 * @returns the outcome
 */
export function runOperation(
  proc: SandboxProcess,
  message: OpMessage,
  options: OperationOptions,
): Promise<SandboxOutcome> {
  return new Promise<SandboxOutcome>((resolve) => {
    const op = new Operation(proc, message, options, resolve);
    op.begin();
  });
}

// The state of one operation; its methods are the named steps of the hot
// path (no closures made per call).
class Operation implements OpHandlers, Expiring {
  readonly #proc: SandboxProcess;
  readonly #message: OpMessage;
  readonly #hooks: SandboxHooks | null;
  readonly #router: ProcessRouter;
  readonly #timeoutMs: number;
  readonly #deadlines: Deadlines;
  readonly #onStopped: ((acknowledged: boolean) => void) | undefined;
  readonly #resolve: (outcome: SandboxOutcome) => void;
  #done = false;
  // Made only when a ctx RPC needs a signal: aborting one builds a
  // DOMException (a stack capture), too dear for every call.
  #controller: AbortController | null = null;

  constructor(
    proc: SandboxProcess,
    message: OpMessage,
    options: OperationOptions,
    resolve: (outcome: SandboxOutcome) => void,
  ) {
    this.#proc = proc;
    this.#message = message;
    this.#hooks = options.hooks;
    this.#router = options.router;
    this.#timeoutMs = options.timeoutMs;
    this.#deadlines = options.deadlines;
    this.#onStopped = options.onStopped;
    this.#resolve = resolve;
  }

  begin(): void {
    const signal = this.#hooks?.signal;
    if (signal?.aborted) {
      this.#proc.release();
      this.cancel();
      return;
    }
    // The frame goes out first: the bookkeeping after it runs while the
    // sandbox works (no outcome can arrive before this turn ends).
    this.#proc.start(this.#message, this);
    if (this.#done) return;
    this.#deadlines.add(this, this.#timeoutMs);
    if (signal) watchAbort(signal, this);
  }

  onEvent(kind: string, data: Record<string, unknown>): void {
    if (this.#done || !this.#hooks) return;
    try {
      this.#hooks.onEvent(kind, data);
    } catch {
      // A failing host listener must not break the call.
    }
  }

  onRpc(rid: number, method: RpcMethod, payload: unknown): void {
    const hooks = this.#hooks;
    if (!hooks) {
      this.#answer(rid, false, undefined, "Not available here");
      return;
    }
    const signal = (this.#controller ??= new AbortController()).signal;
    let pending: Promise<unknown>;
    if (method === "tool") {
      const p = payload as { name?: unknown; args?: unknown } | null;
      const args = typeof p?.args === "object" && p.args !== null
        ? p.args as Record<string, unknown>
        : {};
      pending = hooks.callTool(String(p?.name), args, signal);
    } else if (method === "fetch") {
      pending = hooks.fetch
        ? hooks.fetch(payload as FetchRequest, signal)
        : Promise.reject(new Error("ctx.fetch is not available here"));
    } else pending = hooks.chat(payload as ChatRequest, signal);
    Promise.resolve(pending).then(
      (value) => this.#answer(rid, true, value),
      (err) => this.#answer(rid, false, undefined, String(err?.message ?? err)),
    );
  }

  onOutcome(outcome: SandboxOutcome): void {
    if (this.#done) return;
    this.#done = true;
    this.#deadlines.remove(this);
    const signal = this.#hooks?.signal;
    if (signal) unwatchAbort(signal, this);
    this.#controller?.abort();
    this.#resolve(outcome);
    this.#router.retireIdle();
  }

  #answer(rid: number, ok: boolean, value: unknown, error?: string): void {
    if (this.#done) return;
    const id = this.#message.id;
    this.#proc.send({ t: "rpc_result", id, rid, ok, value, error });
  }

  expire(): void {
    this.#stop("timeout", `Timed out after ${this.#timeoutMs} ms`);
  }

  /** The call's signal aborted. */
  cancel(): void {
    // The reason says why (e.g. the client stopped reading), for the
    // caller and the run history.
    const reason = this.#hooks?.signal?.reason;
    const why = reason instanceof Error ? reason.message : "";
    this.#stop(
      "tool_error",
      why ? `Call was cancelled: ${why}` : "Call was cancelled",
    );
  }

  #stop(code: ErrorCode, message: string): void {
    if (this.#done) return;
    this.onOutcome({ ok: false, code, message, retryable: false });
    // Until the worker answers the abort it may be spinning: route no new
    // call here meanwhile, or it would queue behind the spin.
    const proc = this.#proc;
    const router = this.#router;
    const routed = router.unroute(proc);
    proc.abort(this.#message.id, ABORT_ACK_MS).then((stopped) => {
      // No answer: the worker spins, and only killing the process stops it,
      // once the other calls it serves are over. (A healthy process that
      // was replaced meanwhile is retired the same way.)
      if (stopped ? routed && !router.reroute(proc) : true) proc.tainted = true;
      router.retireIdle();
      this.#onStopped?.(stopped);
    });
  }
}
