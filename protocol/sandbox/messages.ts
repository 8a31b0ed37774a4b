/**
 * The messages on the pipe between the host and a sandbox process. Host to
 * sandbox lines are plain JSON; sandbox to host lines carry the nonce (see
 * `_pipe.ts`). Both sides import only these types.
 *
 * @module
 */

import type { Permissions } from "../permissions.ts";

/** The first line the host writes: everything the sandbox needs to start. */
export interface InitMessage {
  t: "init";
  nonce: string;
  /** Source of the worker bootstrap (run from a `blob:` URL). */
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

/** A Worker's `deno.permissions` option. */
export interface WorkerPermissions {
  read: string[] | false;
  write: string[] | false;
  net: string[] | false;
  env: string[] | false;
  run: string[] | false;
  sys: string[] | false;
  ffi: string[] | false;
  import: false;
}

/** What a worker is asked to do with a loaded module. */
export type OpKind = "call" | "describe" | "permissions";

/** Host to sandbox: run an operation in a worker. */
export interface OpMessage {
  t: "op";
  id: string;
  op: OpKind;
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

/** Host to sandbox: the answer to a `ctx.tools.call` / `ctx.llm.chat`. */
export interface RpcResultMessage {
  t: "rpc_result";
  id: string;
  rid: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

/** Every host-to-sandbox message after init. */
export type HostMessage = OpMessage | AbortMessage | RpcResultMessage;

/** Sandbox to host. */
export type SandboxMessage =
  | { t: "ready" }
  | { t: "event"; id: string; kind: string; data: Record<string, unknown> }
  | {
    t: "rpc";
    id: string;
    rid: number;
    method: "tool" | "chat";
    payload: unknown;
  }
  | {
    t: "result";
    id: string;
    ok: true;
    value: unknown;
    truncated: boolean;
  }
  | {
    t: "result";
    id: string;
    ok: false;
    code: string;
    message: string;
    retryable: boolean;
  }
  /** The worker of an aborted op is gone (it answered, so not busy). */
  | { t: "stopped"; id: string };

/** The permissions a sandbox grants, re-exported for the pipe's users. */
export type { Permissions };
