/**
 * Runs inside a sandbox Worker, before and around untrusted code. The sandbox
 * process starts it from a `blob:` URL (so the worker needs no read access
 * to skillbox's own files), which is why this file has no run-time import:
 * it hardens the global scope, then loads the user module with a dynamic
 * import and answers operations on it. `ctx` is a set of RPC stubs:
 * nothing in it holds a credential.
 *
 * @module
 */

import type {
  OpMessage,
  ToWorkerMessage,
  WorkerEvent,
} from "../../protocol/sandbox/pipe.ts";
import type * as Shared from "../../protocol/describe.ts";

// Defined by the loader ahead of this script (runtime/sandbox/
// bootstrap_text.ts): zod's specifier (deno.json's pin), and
// protocol/describe.ts as a `data:` URL, so `describe` has one source and
// the worker reads no skillbox file.
declare const ZOD: string;
declare const DESCRIBE: string;

/** Deno's internals, reached once here to harden the scope. */
type DenoInternals = {
  Console?: new (print: (msg: string) => void) => Console;
  core?: { print(msg: string, isErr: boolean): void };
};
type WorkerScope = typeof globalThis & {
  postMessage(message: unknown): void;
  close(): void;
  Deno: typeof Deno & { internal: symbol };
};

// Events queued in the worker before coalescing/dropping starts, and how many
// go to the main thread per batch (one batch in flight at a time).
const MAX_QUEUE = 1024;
const BATCH = 128;
// ctx RPCs one operation has in flight; the host refuses any past it
// (MAX_RPCS_IN_FLIGHT in protocol/sandbox/pipe.ts), so later ones wait here.
const MAX_RPCS = 16;

const scope = globalThis as WorkerScope;
const post: (message: unknown) => void = scope.postMessage.bind(scope);
const clone = structuredClone;

// --- hardening: runs before any user code is loaded -----------------------
{
  const deno = scope.Deno;
  const hidden = deno as unknown as Record<string | symbol, unknown>;
  const internal = hidden[deno.internal] as DenoInternals | undefined;
  const core = internal?.core;
  const exit = deno.exit.bind(deno);
  // Console output goes to stderr: stdout carries the host protocol.
  if (internal?.Console && core?.print) {
    const errConsole = new internal.Console((msg: string) =>
      core.print(msg, true)
    );
    Object.defineProperty(scope, "console", {
      value: errConsole,
      writable: false,
      configurable: false,
    });
  }
  const globals = scope as unknown as Record<string, unknown>;
  for (const name of ["Worker", "SharedWorker", "postMessage"]) {
    delete globals[name];
  }
  for (const name of ["stdin", "stdout"]) delete hidden[name];
  delete hidden[deno.internal];
  // Report exits, so the host answers at once rather than at the timeout.
  const reportExit = (code?: number) => {
    post({ t: "exit", code: code ?? 0 });
    exit(code ?? 0);
  };
  Object.defineProperty(deno, "exit", { value: reportExit, writable: false });
  scope.close = () => reportExit(0);
  // A stray rejection in user code must not end a warm worker.
  scope.addEventListener("unhandledrejection", (e) => e.preventDefault());
  scope.addEventListener("error", (e) => e.preventDefault());
}

// --- state -----------------------------------------------------------------
let mod: Record<string, unknown> | null = null;
// The operations running: each one's controller, made only once its
// `ctx.signal` is read (most calls never read it, and an AbortController is
// dear to make); null until then, "aborted" when aborted before.
const running = new Map<string, AbortController | null | "aborted">();
const pendingRpc = new Map<
  number,
  { resolve: (v: unknown) => void; reject: (e: Error) => void }
>();
let nextRid = 1;
// Per operation: its RPCs in flight, and those waiting for one to end.
const rpcsOf = new Map<string, { sent: number; waiting: (() => void)[] }>();
const queue: WorkerEvent[] = [];
const coalesce = new Map<string, WorkerEvent>();
const dropped = new Map<string, number>();
let inFlight = false;
let drainWaiters: (() => void)[] = [];

// --- events: bounded queue with coalescing ---------------------------------
function emit(id: string, kind: string, data: Record<string, unknown>) {
  const key = id + "\u0000" + kind;
  if (queue.length >= MAX_QUEUE) {
    const last = coalesce.get(key);
    if (last && (kind === "progress" || kind === "status")) last.data = data;
    else dropped.set(id, (dropped.get(id) ?? 0) + 1);
  } else {
    const ev = { id, kind, data };
    queue.push(ev);
    coalesce.set(key, ev);
  }
  flush();
}

function flush() {
  if (inFlight) return;
  for (const [id, n] of dropped) {
    if (queue.length >= MAX_QUEUE) break;
    queue.push({
      id,
      kind: "log",
      data: { level: "warn", message: `Dropped ${n} events (event flood)` },
    });
    dropped.delete(id);
  }
  if (queue.length === 0) {
    const waiters = drainWaiters;
    drainWaiters = [];
    for (const w of waiters) w();
    return;
  }
  const batch = queue.splice(0, BATCH);
  for (const ev of batch) {
    const key = ev.id + "\u0000" + ev.kind;
    if (coalesce.get(key) === ev) coalesce.delete(key);
  }
  inFlight = true;
  try {
    post({ t: "events", batch });
  } catch {
    // A value structured clone refuses (a function as a progress message):
    // unsent, the batch would never be acknowledged and every later event
    // and answer of this worker would wait for it.
    post({ t: "events", batch: batch.map(cloneable) });
  }
}

function cloneable(ev: WorkerEvent): WorkerEvent {
  try {
    clone(ev.data);
    return ev;
  } catch {
    const message = "Dropped an event that cannot be sent";
    return { id: ev.id, kind: "log", data: { level: "warn", message } };
  }
}

// Resolves once the queued events are out (asked only while some are).
function drained(): Promise<void> {
  return new Promise((resolve) => {
    drainWaiters.push(resolve);
    flush();
  });
}

// --- ctx ---------------------------------------------------------------------
function rpc(id: string, method: "tool" | "chat" | "fetch", payload: unknown) {
  const rid = nextRid++;
  return new Promise<unknown>((resolve, reject) => {
    pendingRpc.set(rid, { resolve, reject });
    const send = () => post({ t: "rpc", id, rid, method, payload });
    let rpcs = rpcsOf.get(id);
    if (rpcs === undefined) rpcsOf.set(id, rpcs = { sent: 0, waiting: [] });
    if (rpcs.sent < MAX_RPCS) {
      rpcs.sent++;
      send();
    } else rpcs.waiting.push(send);
  });
}

// An RPC of `id` was answered: the next waiting one goes.
function rpcAnswered(id: string): void {
  const rpcs = rpcsOf.get(id);
  if (rpcs === undefined) return;
  const next = rpcs.waiting.shift();
  if (next) next();
  else rpcs.sent--;
}

// The signal of an operation, made on first use.
function signalOf(id: string): AbortSignal {
  const known = running.get(id);
  if (known instanceof AbortController) return known.signal;
  const made = new AbortController();
  if (known === "aborted") {
    made.abort(new DOMException("Aborted", "AbortError"));
  }
  // Read after the answer: a signal that never aborts, not kept.
  if (known !== undefined) running.set(id, made);
  return made.signal;
}

function makeContext(msg: OpMessage): Record<string, unknown> {
  const id = msg.id;
  return Object.freeze({
    progress: (pct: number, message?: string) =>
      emit(id, "progress", { pct: Number(pct), message: message ?? "" }),
    status: (message: string) =>
      emit(id, "status", { message: String(message) }),
    log: (level: string, message: string) =>
      emit(id, "log", { level: String(level), message: String(message) }),
    artifact: (
      name: string,
      mime: string,
      bytes: Uint8Array | string,
      final = false,
    ) =>
      emit(id, "artifact", {
        name: String(name),
        mime: String(mime),
        chunk:
          (typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes)
            .toBase64(),
        final: Boolean(final),
      }),
    tools: Object.freeze({
      call: (name: string, args: Record<string, unknown> = {}) =>
        rpc(id, "tool", { name: String(name), args }),
    }),
    llm: Object.freeze({
      chat: (request: unknown) => rpc(id, "chat", request),
    }),
    // The host's egress broker performs the request (see runtime/egress).
    fetch: (request: unknown) => rpc(id, "fetch", request),
    config: msg.config,
    metadata: msg.metadata,
    get signal() {
      return signalOf(id);
    },
    session: msg.session,
    call: msg.call,
  });
}

// --- definitions -------------------------------------------------------------
/** The part of zod's module describe uses. */
interface ZodModule {
  z: {
    toJSONSchema(
      schema: unknown,
      options?: { unrepresentable: "any" },
    ): unknown;
  };
}

// Thrown by the zod hook until zod is loaded: describing starts over then.
const NEEDS_ZOD = new Error("zod is not loaded");
let zod: ZodModule["z"] | null = null;

function zodToJsonSchema(schema: unknown): unknown {
  if (zod === null) throw NEEDS_ZOD;
  try {
    return zod.toJSONSchema(schema);
  } catch {
    return zod.toJSONSchema(schema, { unrepresentable: "any" });
  }
}

function definitionOf(name: string): Record<string, unknown> {
  const def = mod?.[name];
  if (typeof def !== "object" || def === null) {
    throw new Error(`Export "${name}" is not a definition`);
  }
  return def as Record<string, unknown>;
}

// describe.ts is loaded on first use: a call needs neither it nor zod.
let shared: Promise<typeof Shared> | null = null;
function sharedModule(): Promise<typeof Shared> {
  return shared ??= import(DESCRIBE);
}

// zod is loaded only for a module whose definitions use it.
async function describe(): Promise<unknown[]> {
  const { describeExports } = await sharedModule();
  const names = Object.keys(mod ?? {});
  const get = (name: string) => mod?.[name];
  const hooks = { zodToJsonSchema, stringifyObject: String };
  try {
    return describeExports(names, get, hooks);
  } catch (err) {
    if (err !== NEEDS_ZOD) throw err;
  }
  zod = (await import(ZOD) as ZodModule).z;
  return describeExports(names, get, hooks);
}

// Runs one operation. A `run` that returns a plain value is answered in the
// same turn (no await on the way): the trivial call is the common one.
function runOp(msg: OpMessage): void {
  running.set(msg.id, null);
  let value: unknown;
  try {
    value = msg.op === "call"
      ? runCall(msg)
      : msg.op === "describe"
      ? describe()
      : permissionsOf(msg);
  } catch (err) {
    return answer(msg.id, err, true);
  }
  if (!isThenable(value)) return answer(msg.id, value);
  Promise.resolve(value).then(
    (v) => answer(msg.id, v),
    (err) => answer(msg.id, err, true),
  );
}

// The host validated the arguments against the input schema (JSON Schema
// derived from the zod one at discovery): they are not checked again here.
function runCall(msg: OpMessage): unknown {
  const def = definitionOf(msg.export);
  if (typeof def.run !== "function") {
    throw new Error(`Definition "${msg.export}" has no run function`);
  }
  return (def.run as (a: unknown, c: unknown) => unknown)(
    msg.args,
    makeContext(msg),
  );
}

async function permissionsOf(msg: OpMessage): Promise<unknown> {
  const spec = definitionOf(msg.export).permissions;
  const { normalizePermissions } = await sharedModule();
  return normalizePermissions(
    typeof spec === "function" ? await spec(msg.config) : spec,
    String,
  );
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") &&
    value !== null && typeof (value as { then?: unknown }).then === "function";
}

// Events go out before the answer: the host drops events of answered calls.
function answer(id: string, value: unknown, failed = false): void {
  if (inFlight || queue.length > 0 || dropped.size > 0) {
    drained().then(() => answer(id, value, failed));
    return;
  }
  running.delete(id);
  // Its RPCs still waiting are never sent: the host would not answer them.
  rpcsOf.delete(id);
  let message = failed ? errorMessage(value) : "";
  if (!failed) {
    try {
      return post({ t: "result", id, ok: true, value });
    } catch (err) {
      message = `Result is not serializable: ${errorMessage(err)}`;
    }
  }
  post({ t: "result", id, ok: false, code: "tool_error", message });
}

// Always a string: code may set an Error's message to any value.
function errorMessage(err: unknown): string {
  try {
    return String(err instanceof Error ? err.message : err);
  } catch {
    return "Unknown error";
  }
}

function fileUrl(path: string): string {
  return "file://" + path.split("/").map(encodeURIComponent).join("/");
}

function abortOp(id: string): void {
  const known = running.get(id);
  if (known instanceof AbortController) {
    known.abort(new DOMException("Aborted", "AbortError"));
  } else if (known === null) running.set(id, "aborted");
}

// --- the message loop ----------------------------------------------------------
// The sandbox process (trusted, the only correspondent) sends JSON text.
async function onMessage(e: Event): Promise<void> {
  const data = (e as MessageEvent<ToWorkerMessage | string>).data;
  const msg: ToWorkerMessage = typeof data === "string"
    ? JSON.parse(data)
    : data;
  switch (msg.t) {
    case "load":
      try {
        mod = await import(fileUrl(msg.path));
        post({ t: "loaded" });
      } catch (err) {
        post({ t: "load_error", message: errorMessage(err) });
      }
      break;
    case "op":
      runOp(msg);
      break;
    case "abort":
      abortOp(msg.id);
      post({ t: "aborted", id: msg.id });
      break;
    case "rpc_result": {
      const pending = pendingRpc.get(msg.rid);
      pendingRpc.delete(msg.rid);
      if (pending) rpcAnswered(msg.id);
      if (msg.ok) pending?.resolve(msg.value);
      else pending?.reject(new Error(msg.error ?? "RPC failed"));
      break;
    }
    case "ack":
      inFlight = false;
      flush();
      break;
  }
}

scope.addEventListener("message", onMessage);
post({ t: "ready" });
