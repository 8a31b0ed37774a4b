/**
 * Every message on the two internal pipes of a sandbox: host ↔ sandbox
 * process (NDJSON on stdin/stdout; sandbox to host lines carry the nonce, see
 * `frames.ts`) and sandbox process ↔ worker (`postMessage`). One operation is
 * one {@link OpMessage}, built once by the host and handed on unchanged to
 * the worker. Each receiving side checks what it gets with the decoder for
 * its boundary ({@link decodeSandboxMessage}, {@link decodeHostMessage},
 * {@link decodeWorkerMessage}); the worker trusts its own process and only
 * narrows by `t`.
 *
 * @module
 */

import { ERROR_CODES, type ErrorCode } from "../codes.ts";
import type { PermissionKind, Permissions } from "../permissions.ts";

/** The first line the host writes: everything the sandbox needs to start. */
export interface InitMessage {
  t: "init";
  nonce: string;
  /** The worker bootstrap as JavaScript (run from a `blob:` URL). */
  bootstrap: string;
  /** The worker's `deno.permissions`. */
  permissions: WorkerPermissions;
  /** Pre-spawned idle workers kept ready. */
  spares: number;
  /** Warm workers kept per process before the least recently used goes. */
  maxWarmWorkers: number;
  /** Serialized result bound (characters of JSON). */
  maxResultBytes: number;
  /** Serialized bound for one event or RPC payload. */
  maxEventBytes: number;
}

/**
 * A Worker's `deno.permissions` option: a list, `false`, or `true` (only for
 * a grant of `"*"`, which the operator's policy must hold) per kind.
 */
export type WorkerPermissions =
  & { [K in PermissionKind]: string[] | boolean }
  & { import: false };

/** What a worker is asked to do with a loaded module. */
export type OpKind = "call" | "describe" | "permissions";

/**
 * Host to sandbox, and sandbox process to worker: run one operation. The
 * process routes on `path`, `workerKey` and `primeKey`, then posts this same
 * object to the worker, which reads the rest.
 */
export interface OpMessage {
  t: "op";
  id: string;
  op: OpKind;
  /** Absolute path of the module file. */
  path: string;
  export: string;
  /** Warm worker key; "" forces a fresh worker that is discarded after. */
  workerKey: string;
  /**
   * For fresh workers: the module version a replacement is pre-loaded with,
   * so the next per-call operation on it skips the load.
   */
  primeKey?: string;
  args: unknown;
  config: Record<string, unknown>;
  metadata: Record<string, unknown>;
  session: string;
  call: string;
}

/** Host to sandbox: abort an operation (timeout, cancel). */
export interface AbortMessage {
  t: "abort";
  id: string;
}

/** Host to sandbox (and on to the worker): a `ctx` RPC's answer. */
export interface RpcResultMessage {
  t: "rpc_result";
  id: string;
  rid: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

/** Host to sandbox: pre-load a module in a fresh worker for `primeKey`. */
export interface PrimeMessage {
  t: "prime";
  primeKey: string;
  path: string;
}

/** Host to sandbox: a session ended, its warm workers go (busy: once done). */
export interface EndSessionMessage {
  t: "end_session";
  session: string;
}

/** Host to sandbox: report {@link StatsMessage} (for tests and monitoring). */
export interface StatsRequestMessage {
  t: "stats";
  id: string;
  /** Count the warm workers of this session too. @default none */
  session?: string;
}

/** Every host-to-sandbox message after init. */
export type HostMessage =
  | OpMessage
  | AbortMessage
  | RpcResultMessage
  | PrimeMessage
  | EndSessionMessage
  | StatsRequestMessage;

/** Which host service a `ctx` RPC asks for. */
export type RpcMethod = "tool" | "chat" | "fetch";

/** An event a `ctx` call emitted (`progress`, `status`, `log`, `artifact`). */
export interface EventMessage {
  t: "event";
  id: string;
  kind: string;
  data: Record<string, unknown>;
}

/** A `ctx.tools.call` or `ctx.llm.chat` on its way to the host. */
export interface RpcMessage {
  t: "rpc";
  id: string;
  rid: number;
  method: RpcMethod;
  payload: unknown;
}

/** An operation's answer: its value, or a failure with an A2E code. */
export type ResultMessage =
  | { t: "result"; id: string; ok: true; value: unknown; truncated: boolean }
  | {
    t: "result";
    id: string;
    ok: false;
    code: ErrorCode;
    message: string;
    retryable: boolean;
  };

/** Sandbox to host: the answer to a {@link StatsRequestMessage}. */
export interface StatsMessage {
  t: "stats";
  id: string;
  /** Workers alive in the process (warm, primed, spare and running). */
  workers: number;
  /** Warm workers kept for the session asked about. */
  sessionWorkers: number;
}

/** Sandbox to host. */
export type SandboxMessage =
  | { t: "ready" }
  | StatsMessage
  | EventMessage
  | RpcMessage
  | ResultMessage
  /** The worker of an aborted op is gone (it answered, so not busy). */
  | { t: "stopped"; id: string };

/** Sandbox process to worker. */
export type ToWorkerMessage =
  | { t: "load"; path: string }
  | OpMessage
  | { t: "abort"; id: string }
  | RpcResultMessage
  /** The previous event batch is written: send the next. */
  | { t: "ack" };

/** One event in a worker's batch. */
export interface WorkerEvent {
  id: string;
  kind: string;
  data: Record<string, unknown>;
}

/** Worker to sandbox process. Untrusted: decode with {@link decodeWorkerMessage}. */
export type FromWorkerMessage =
  | { t: "ready" }
  | { t: "loaded" }
  | { t: "load_error"; message: string }
  | { t: "exit"; code: number }
  | { t: "aborted"; id: string }
  | { t: "events"; batch: WorkerEvent[] }
  | { t: "rpc"; id: string; rid: number; method: RpcMethod; payload: unknown }
  | { t: "result"; id: string; ok: true; value: unknown }
  | { t: "result"; id: string; ok: false; code: string; message: string };

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null;
}

function record(value: unknown): Record<string, unknown> {
  return isObject(value) && !Array.isArray(value) ? value : {};
}

/**
 * Reads one sandbox-to-host frame. The sandbox's main thread writes these,
 * but a compromised one must not crash or confuse the host: fields are
 * type-checked, and anything else is `null` (ignored).
 *
 * @param raw the parsed JSON of one frame
 * @returns the message, or null when it is not one
 * @example A result and a stray value
 * ```ts
 * import { decodeSandboxMessage } from "./messages.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   decodeSandboxMessage({ t: "result", id: "1", ok: true, value: 3, truncated: false }),
 *   { t: "result", id: "1", ok: true, value: 3, truncated: false },
 * );
 * assert.equal(decodeSandboxMessage({ t: "result", id: 1 }), null);
 * ```
 */
export function decodeSandboxMessage(raw: unknown): SandboxMessage | null {
  if (!isObject(raw)) return null;
  const { t, id } = raw;
  if (t === "ready") return { t };
  if (typeof id !== "string") return null;
  switch (t) {
    case "result":
      return raw.ok === true
        ? {
          t,
          id,
          ok: true,
          value: raw.value,
          truncated: raw.truncated === true,
        }
        : {
          t,
          id,
          ok: false,
          code: errorCode(raw.code),
          message: String(raw.message),
          retryable: raw.retryable === true,
        };
    case "event":
      return { t, id, kind: String(raw.kind), data: record(raw.data) };
    case "rpc":
      return {
        t,
        id,
        rid: Number(raw.rid),
        method: rpcMethod(raw.method),
        payload: raw.payload,
      };
    case "stopped":
      return { t, id };
    case "stats":
      return {
        t,
        id,
        workers: count(raw.workers),
        sessionWorkers: count(raw.sessionWorkers),
      };
  }
  return null;
}

function count(raw: unknown): number {
  return typeof raw === "number" && Number.isSafeInteger(raw) && raw >= 0
    ? raw
    : 0;
}

/**
 * Reads one host-to-sandbox line after init. The host is trusted; this only
 * narrows the type and drops lines that are not messages.
 *
 * @param raw the parsed JSON of one line
 * @returns the message, or null
 * @example
 * ```ts
 * import { decodeHostMessage } from "./messages.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(decodeHostMessage({ t: "abort", id: "7" }), { t: "abort", id: "7" });
 * assert.deepEqual(decodeHostMessage({ t: "end_session", session: "s" }),
 *   { t: "end_session", session: "s" });
 * assert.equal(decodeHostMessage({ t: "op" }), null);
 * ```
 */
export function decodeHostMessage(raw: unknown): HostMessage | null {
  if (!isObject(raw)) return null;
  if (raw.t === "end_session") {
    return typeof raw.session === "string"
      ? { t: "end_session", session: raw.session }
      : null;
  }
  if (raw.t === "prime") {
    return typeof raw.primeKey === "string" && typeof raw.path === "string"
      ? { t: "prime", primeKey: raw.primeKey, path: raw.path }
      : null;
  }
  if (typeof raw.id !== "string") return null;
  if (raw.t === "stats") {
    return typeof raw.session === "string"
      ? { t: "stats", id: raw.id, session: raw.session }
      : { t: "stats", id: raw.id };
  }
  if (raw.t === "op") {
    return typeof raw.path === "string" && typeof raw.workerKey === "string"
      ? raw as unknown as OpMessage
      : null;
  }
  if (raw.t === "abort") return { t: "abort", id: raw.id };
  if (raw.t === "rpc_result") return raw as unknown as RpcResultMessage;
  return null;
}

/**
 * Reads one worker-to-process message. The worker runs untrusted code that
 * may post anything, so every field is checked; the caller still checks
 * that the operation id belongs to that worker.
 *
 * @param raw the message data
 * @returns the message, or null when it is not one
 * @example A forged result without an id
 * ```ts
 * import { decodeWorkerMessage } from "./messages.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(decodeWorkerMessage({ t: "loaded" }), { t: "loaded" });
 * assert.equal(decodeWorkerMessage({ t: "result", ok: true }), null);
 * ```
 */
export function decodeWorkerMessage(raw: unknown): FromWorkerMessage | null {
  if (!isObject(raw)) return null;
  const t = raw.t;
  switch (t) {
    case "ready":
    case "loaded":
      return { t };
    case "load_error":
      return { t, message: String(raw.message) };
    case "exit":
      return { t, code: Number(raw.code) };
    case "events":
      return { t, batch: eventBatch(raw.batch) };
  }
  const id = raw.id;
  if (typeof id !== "string") return null;
  if (t === "aborted") return { t, id };
  if (t === "rpc") {
    return {
      t,
      id,
      rid: Number(raw.rid),
      method: rpcMethod(raw.method),
      payload: raw.payload,
    };
  }
  if (t === "result") {
    return raw.ok === true ? { t, id, ok: true, value: raw.value } : {
      t,
      id,
      ok: false,
      code: String(raw.code),
      message: String(raw.message),
    };
  }
  return null;
}

const CODES: ReadonlySet<unknown> = new Set(ERROR_CODES);

function errorCode(raw: unknown): ErrorCode {
  return CODES.has(raw) ? raw as ErrorCode : "sandbox_crash";
}

function eventBatch(raw: unknown): WorkerEvent[] {
  if (!Array.isArray(raw)) return [];
  const out: WorkerEvent[] = [];
  for (const ev of raw) {
    if (!isObject(ev) || typeof ev.id !== "string") continue;
    out.push({ id: ev.id, kind: String(ev.kind), data: record(ev.data) });
  }
  return out;
}

/** The permissions a sandbox grants, re-exported for the pipe's users. */
export type { Permissions };

// An unknown method is decoded as a tool call, which the host checks by
// name like any other.
function rpcMethod(raw: unknown): RpcMethod {
  return raw === "chat" || raw === "fetch" ? raw : "tool";
}
