/**
 * The pipes between the host and its sandbox processes, and between a
 * sandbox process and its workers: how lines are framed, and every message
 * they carry.
 *
 * Framing. The host writes NDJSON (stdin, then the control socket, see
 * `control.ts`). A sandbox's stdout is shared with untrusted code (`node:fs`
 * can write to fd 1 from a worker), so every frame the sandbox writes starts
 * with a per-process random nonce that only the host and the sandbox's own
 * main thread know. Lines without it are noise: dropped, never parsed. Lines
 * are bounded in length so a skill printing 100 MB without a newline cannot
 * grow host memory (the splitting itself is `protocol/lines.ts`).
 *
 * Messages. Each message is described once, in a table of its fields: each
 * field is a reader that takes the raw value and returns the field, or
 * refuses the message. The TypeScript types are inferred from the readers,
 * and each receiving side's decoder runs the same table
 * ({@link decodeSandboxMessage}, {@link decodeHostMessage},
 * {@link decodeWorkerMessage}, {@link decodeDiscoveryFrame}). One operation
 * is one {@link OpMessage}, built once by the host and handed on unchanged
 * to the worker; the worker trusts its own process and only narrows by `t`.
 *
 * @module
 */

import { ERROR_CODES, type ErrorCode } from "../codes.ts";
import type { PermissionKind } from "../permissions.ts";
import { LineSplitter } from "../lines.ts";

// ---------------------------------------------------------------------------
// Field readers. Each takes one field's raw value and returns what the
// message holds: the value (checked, or coerced where a wrong type is
// harmless), REFUSE to drop the whole message, or ABSENT to leave an
// optional field out. The message types are inferred from what they return.

const REFUSE: unique symbol = Symbol("refuse");
const ABSENT: unique symbol = Symbol("absent");
type Refuse = typeof REFUSE;
type Absent = typeof ABSENT;
type Reader = (raw: unknown) => unknown;

const string = (raw: unknown): string | Refuse =>
  typeof raw === "string" ? raw : REFUSE;
const optionalString = (raw: unknown): string | Absent =>
  typeof raw === "string" ? raw : ABSENT;
// Never throw: a worker's message is a structured clone of what the module
// built, and String() or Number() of an object whose toString or valueOf is
// not a function throws (a throw here would end the sandbox process, and
// every session's call in it).
const text = (raw: unknown): string => {
  try {
    return String(raw);
  } catch {
    return "(not text)";
  }
};
const number = (raw: unknown): number => {
  try {
    return Number(raw);
  } catch {
    return NaN;
  }
};
const flag = (raw: unknown): boolean => raw === true;
// `ok` of a result: the success variant only when it is exactly `true`.
const succeeded = (raw: unknown): true | Refuse => raw === true || REFUSE;
const failed = (): false => false;
const any = (raw: unknown): unknown => raw;
// A worker count a hostile process cannot make odd.
const count = (raw: unknown): number =>
  typeof raw === "number" && Number.isSafeInteger(raw) && raw >= 0 ? raw : 0;
// A module's index in a discovery batch (the decoder checks the bound).
const index = (raw: unknown): number | Refuse =>
  typeof raw === "number" && Number.isSafeInteger(raw) && raw >= 0
    ? raw
    : REFUSE;
const milliseconds = (raw: unknown): number | Refuse =>
  typeof raw === "number" && Number.isFinite(raw) && raw >= 0 ? raw : REFUSE;
const record = (raw: unknown): Record<string, unknown> =>
  isObject(raw) && !Array.isArray(raw) ? raw : {};
const CODES: ReadonlySet<unknown> = new Set(ERROR_CODES);
const errorCode = (raw: unknown): ErrorCode =>
  CODES.has(raw) ? raw as ErrorCode : "sandbox_crash";
// An unknown method is read as a tool call, which the host checks by name
// like any other.
const rpcMethod = (raw: unknown): "tool" | "chat" | "fetch" =>
  raw === "chat" || raw === "fetch" ? raw : "tool";
const opKind = (raw: unknown): "call" | "describe" | "permissions" | Refuse =>
  raw === "call" || raw === "describe" || raw === "permissions" ? raw : REFUSE;
// A worker's event batch: events without a string id are skipped.
const events = (raw: unknown): WorkerEvent[] => {
  if (!Array.isArray(raw)) return [];
  const out: WorkerEvent[] = [];
  for (const event of raw) {
    const read = decodeEvent(event);
    if (read !== null) out.push(read as WorkerEvent);
  }
  return out;
};

// ---------------------------------------------------------------------------
// The messages, by the field `t` that names them. A message with two shapes
// (a result's success and failure) lists both: the first its fields accept.

/** One event a `ctx` call emitted (`progress`, `status`, `log`, `artifact`). */
const EVENT = { id: string, kind: text, data: record };

/** A `ctx.tools.call`, `ctx.llm.chat` or `ctx.fetch` on its way to the host. */
const RPC = { id: string, rid: number, method: rpcMethod, payload: any };

/** Run one operation: host to sandbox, then the same object to the worker. */
const OP = {
  id: string,
  op: opKind,
  /** Absolute path of the module file. */
  path: string,
  export: string,
  /** Warm worker key; "" forces a fresh worker that is discarded after. */
  workerKey: string,
  /**
   * For fresh workers: the module version a replacement is pre-loaded with,
   * so the next per-call operation on it skips the load.
   */
  primeKey: optionalString,
  args: any,
  config: record,
  metadata: record,
  session: string,
  call: string,
};

/** A `ctx` RPC's answer: host to sandbox, then on to the worker. */
const RPC_RESULT = {
  id: string,
  rid: number,
  ok: flag,
  value: any,
  error: optionalString,
};

/** Host to sandbox, after init. */
const HOST = {
  op: OP,
  /** Abort an operation (timeout, cancel). */
  abort: { id: string },
  rpc_result: RPC_RESULT,
  /** Pre-load a module in a fresh worker for `primeKey`. */
  prime: { primeKey: string, path: string },
  /** A session ended: its warm workers go (busy ones once done). */
  end_session: { session: string },
  /** Report the sandbox's stats; `session`'s warm workers are counted too. */
  stats: { id: string, session: optionalString },
};

/** Sandbox to host. */
const SANDBOX = {
  ready: {},
  result: [
    { ok: succeeded, id: string, value: any, truncated: flag },
    {
      ok: failed,
      id: string,
      code: errorCode,
      message: text,
      retryable: flag,
    },
  ] as const,
  event: EVENT,
  rpc: RPC,
  /** The worker of an aborted op is gone (it answered, so not busy). */
  stopped: { id: string },
  /**
   * The answer to a `stats` request: workers alive in the process (warm,
   * primed, spare and running), and warm workers kept for the session.
   */
  stats: { id: string, workers: count, sessionWorkers: count },
};

/** Sandbox process to worker (the worker trusts it: no decoder). */
const TO_WORKER = {
  load: { path: string },
  op: OP,
  abort: { id: string },
  rpc_result: RPC_RESULT,
  /** The previous event batch is written: send the next. */
  ack: {},
};

/** Worker to sandbox process. */
const FROM_WORKER = {
  ready: {},
  loaded: {},
  load_error: { message: text },
  exit: { code: number },
  events: { batch: events },
  aborted: { id: string },
  rpc: RPC,
  result: [
    { ok: succeeded, id: string, value: any },
    { ok: failed, id: string, code: text, message: text },
  ] as const,
};

/** Discovery process to host. */
const DISCOVERY = {
  /** A module's worker is being started (`i`: its index in the batch). */
  started: { i: index },
  /** What describing one module gave: definitions, or why it failed. */
  described: [
    { ok: succeeded, i: index, value: any },
    { ok: failed, i: index, message: text },
  ] as const,
  /**
   * Last: every module is answered, and the CPU time (user plus system, all
   * threads) the process used, for the host's accounting. A confined
   * process runs in its own PID namespace, where the kernel does not add it
   * to the host's children's CPU time.
   */
  done: { cpuMs: milliseconds },
};

// ---------------------------------------------------------------------------
// The types, inferred from the tables.

type Fields = Record<string, Reader>;
type Table = Record<string, Fields | readonly Fields[]>;
type Value<R> = R extends (raw: unknown) => infer V
  ? Exclude<V, Refuse | Absent>
  : never;
// A field is optional when its reader may leave it out.
type OptionalKeys<F> = {
  [K in keyof F]: F[K] extends (raw: unknown) => infer V
    ? unknown extends V ? never : Absent extends V ? K : never
    : never;
}[keyof F];
type Read<F> =
  & { [K in Exclude<keyof F, OptionalKeys<F>>]: Value<F[K]> }
  & { [K in OptionalKeys<F>]?: Value<F[K]> };
type Flat<T> = { [K in keyof T]: T[K] };
type Variant<T extends string, F> = F extends Fields ? Flat<{ t: T } & Read<F>>
  : never;
type MessageOf<T extends Table> = {
  [K in keyof T & string]: Variant<
    K,
    T[K] extends readonly (infer F)[] ? F : T[K]
  >;
}[keyof T & string];

/** Which host service a `ctx` RPC asks for. */
export type RpcMethod = Value<typeof rpcMethod>;
/** One event in a worker's batch. */
export type WorkerEvent = Flat<Read<typeof EVENT>>;
/**
 * Host to sandbox, and sandbox process to worker: run one operation. The
 * process routes on `path`, `workerKey` and `primeKey`, then posts this same
 * object to the worker, which reads the rest.
 */
export type OpMessage = Variant<"op", typeof OP>;
/** Every host-to-sandbox message after init. */
export type HostMessage = MessageOf<typeof HOST>;
/** Sandbox to host. */
export type SandboxMessage = MessageOf<typeof SANDBOX>;
/** An event a `ctx` call emitted, sandbox to host. */
export type EventMessage = Extract<SandboxMessage, { t: "event" }>;
/** Sandbox process to worker. */
export type ToWorkerMessage = MessageOf<typeof TO_WORKER>;
/** Worker to sandbox process. Untrusted: decode with {@link decodeWorkerMessage}. */
export type FromWorkerMessage = MessageOf<typeof FROM_WORKER>;
/** Every frame a discovery process writes. */
export type DiscoveryFrame = MessageOf<typeof DISCOVERY>;

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
  /**
   * Resident memory cap of the whole process in MiB (0: none): V8's heap
   * cap holds one isolate's heap, not binary buffers nor the sum of the
   * workers', so the process watches its own resident size.
   */
  maxResidentMb: number;
}

/**
 * A Worker's `deno.permissions` option: a list, `false`, or `true` (only for
 * a grant of `"*"`, which the operator's policy must hold) per kind.
 */
export type WorkerPermissions =
  & { [K in PermissionKind]: string[] | boolean }
  & { import: false };

/** One module of a discovery batch, as the host sends it: paths only. */
export interface DiscoveryModule {
  /** Absolute path of the module file. */
  path: string;
  /** What its worker may read (absolute): its own folder or files. */
  read: string[];
}

/**
 * The one line the host writes to a discovery process, which then closes
 * the process's stdin: nothing a worker could read from fd 0 afterwards
 * exists. The process answers with {@link DiscoveryFrame}s and exits once
 * every module is answered.
 */
export interface DiscoveryInit {
  t: "discover";
  /** Prefix of every frame the process writes. */
  nonce: string;
  /** Source of the worker bootstrap (run from a `blob:` URL). */
  bootstrap: string;
  /** The batch, in order: frames name a module by its index here. */
  modules: DiscoveryModule[];
  /** Modules loading at once. */
  workers: number;
  /** Bound on one answer (characters of JSON). */
  maxResultBytes: number;
}

// ---------------------------------------------------------------------------
// The decoders: one loop over a table's fields. A table is read once into
// plain arrays (field name, reader, optional) so a message's decode is a
// Map lookup by `t` and a loop; a prototype name such as `toString` is no
// message type. Measured against a decoder compiled from the same tables
// into straight-line code (bench/pipe_decode_bench.ts), the loop costs
// tens of nanoseconds more per message: nothing against a call's ~200 µs,
// and it keeps generated code out of the host and the sandbox.

type Raw = Record<string, unknown>;
type Decoder = (raw: unknown) => unknown;

function isObject(value: unknown): value is Raw {
  return typeof value === "object" && value !== null;
}

interface Field {
  name: string;
  read: Reader;
}

function fieldsOf(fields: Fields): Field[] {
  return Object.entries(fields).map(([name, read]) => ({ name, read }));
}

// One shape of `raw`: the message, or REFUSE when a field refuses. `t`
// puts the message's type first; `whole` returns `raw` itself when every
// field reads to itself (nothing to copy).
function readShape(
  raw: Raw,
  fields: readonly Field[],
  how: { t: boolean; whole: boolean },
): Raw | Refuse {
  const message: Raw = how.t ? { t: raw.t } : {};
  let same = how.whole && fields.length > 0;
  for (const { name, read } of fields) {
    const given = raw[name];
    const value = read(given);
    if (value === REFUSE) return REFUSE;
    // An optional field's reader leaves it out when it is missing or wrong.
    if (value === ABSENT) {
      same &&= given === undefined;
      continue;
    }
    same &&= value === given;
    message[name] = value;
  }
  return same ? raw : message;
}

// One decoder for a table: the first shape of `raw.t` its fields accept,
// as a fresh object of the table's fields (or, `whole`, `raw` itself when
// it already reads so), or null.
function compile(table: Table, whole: boolean): Decoder {
  const shapes = new Map<unknown, Field[][]>(
    Object.entries(table).map(([t, one]) => [
      t,
      (Array.isArray(one) ? one : [one]).map(fieldsOf),
    ]),
  );
  const how = { t: true, whole };
  return (raw) => {
    if (!isObject(raw)) return null;
    for (const fields of shapes.get(raw.t) ?? []) {
      const message = readShape(raw, fields, how);
      if (message !== REFUSE) return message;
    }
    return null;
  };
}

// One event of a worker's batch (no `t`): the event, or null.
const EVENT_FIELDS = fieldsOf(EVENT);
const EVENT_HOW = { t: false, whole: false };
function decodeEvent(raw: unknown): unknown {
  if (!isObject(raw)) return null;
  const event = readShape(raw, EVENT_FIELDS, EVENT_HOW);
  return event === REFUSE ? null : event;
}

const SANDBOX_DECODER = compile(SANDBOX, false);
const HOST_DECODER = compile(HOST, true);
const WORKER_DECODER = compile(FROM_WORKER, false);
const DISCOVERY_DECODER = compile(DISCOVERY, false);

/**
 * Reads one sandbox-to-host frame. The sandbox's main thread writes these,
 * but a compromised one must not crash or confuse the host: fields are
 * read by their table, and anything else is `null` (ignored).
 *
 * @param raw the parsed JSON of one frame
 * @returns the message (a fresh object of its fields only), or null when
 *   it is not one
 * @example A result and a stray value
 * ```ts
 * import { decodeSandboxMessage } from "./pipe.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   decodeSandboxMessage({ t: "result", id: "1", ok: true, value: 3, truncated: false }),
 *   { t: "result", id: "1", ok: true, value: 3, truncated: false },
 * );
 * assert.equal(decodeSandboxMessage({ t: "result", id: 1 }), null);
 * ```
 */
export function decodeSandboxMessage(raw: unknown): SandboxMessage | null {
  return SANDBOX_DECODER(raw) as SandboxMessage | null;
}

/**
 * Reads one host-to-sandbox line after init. The host is trusted: a
 * message that already reads as its table says (every operation the host
 * builds) is handed on as it is, not copied; one a field refuses is null.
 *
 * @param raw the parsed JSON of one line
 * @returns the message, or null
 * @example
 * ```ts
 * import { decodeHostMessage } from "./pipe.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(decodeHostMessage({ t: "abort", id: "7" }), { t: "abort", id: "7" });
 * assert.deepEqual(decodeHostMessage({ t: "end_session", session: "s" }),
 *   { t: "end_session", session: "s" });
 * assert.equal(decodeHostMessage({ t: "op" }), null);
 * ```
 */
export function decodeHostMessage(raw: unknown): HostMessage | null {
  return HOST_DECODER(raw) as HostMessage | null;
}

/**
 * Reads one worker-to-process message. The worker runs untrusted code that
 * may post anything, so every field is read by its table; the caller still
 * checks that the operation id belongs to that worker.
 *
 * @param raw the message data
 * @returns the message (a fresh object), or null when it is not one
 * @example A forged result without an id
 * ```ts
 * import { decodeWorkerMessage } from "./pipe.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(decodeWorkerMessage({ t: "loaded" }), { t: "loaded" });
 * assert.equal(decodeWorkerMessage({ t: "result", ok: true }), null);
 * ```
 */
export function decodeWorkerMessage(raw: unknown): FromWorkerMessage | null {
  return WORKER_DECODER(raw) as FromWorkerMessage | null;
}

/**
 * Reads one discovery frame (the process is trusted code, but its stdout is
 * shared with untrusted workers: only nonce-carrying lines are parsed, and
 * they are still read by their table).
 *
 * @param raw a parsed JSON value
 * @param size how many modules the batch has
 * @returns the frame, or null when it is not one or names no module of
 *   the batch
 * @example Refuse an index outside the batch
 * ```ts
 * import { decodeDiscoveryFrame } from "./pipe.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(decodeDiscoveryFrame({ t: "started", i: 1 }, 2), { t: "started", i: 1 });
 * assert.equal(decodeDiscoveryFrame({ t: "started", i: 5 }, 2), null);
 * assert.deepEqual(decodeDiscoveryFrame({ t: "done", cpuMs: 9 }, 2), { t: "done", cpuMs: 9 });
 * ```
 */
export function decodeDiscoveryFrame(
  raw: unknown,
  size: number,
): DiscoveryFrame | null {
  const frame = DISCOVERY_DECODER(raw) as DiscoveryFrame | null;
  return frame !== null && "i" in frame && frame.i >= size ? null : frame;
}

// ---------------------------------------------------------------------------
// Framing.

// Bytes asked for per read of a byte stream.
const READ_CHUNK = 64 * 1024;

/**
 * The longest line, in bytes, a reader takes from a writer that bounds its
 * frames in characters of JSON: a character (a UTF-16 unit) is at most 3
 * bytes of UTF-8, and each frame has an envelope (its type, id, the
 * nonce, a failure's message of at most {@link MAX_MESSAGE_CHARS}).
 *
 * @param chars the writer's bound on a frame's payload, in characters
 * @returns the line bound in bytes
 * @example A 1 MiB result bound
 * ```ts
 * import { maxFrameBytes } from "./pipe.ts";
 * import assert from "node:assert/strict";
 * assert.equal(maxFrameBytes(1 << 20), 3 * (1 << 20) + 65536);
 * ```
 */
export function maxFrameBytes(chars: number): number {
  return 3 * chars + 65536;
}

/**
 * `ctx` RPCs (`ctx.fetch`, `ctx.tools.call`, `ctx.llm.chat`) one operation
 * may have in flight: each holds host work and memory until it is
 * answered. The worker bootstrap queues its own past this; the host
 * refuses any past it (a worker's code can undo what its bootstrap counts).
 */
export const MAX_RPCS_IN_FLIGHT = 16;

/**
 * Characters of a failure's message (a worker's error, a module that
 * cannot load) a sandbox writes; the rest is cut.
 */
export const MAX_MESSAGE_CHARS = 4096;

/**
 * Makes a fresh nonce for one sandbox process.
 *
 * @returns 32 hex characters from the CSPRNG
 * @example
 * ```ts
 * import { makeNonce } from "./pipe.ts";
 * import assert from "node:assert/strict";
 * assert.match(makeNonce(), /^[0-9a-f]{32}$/);
 * ```
 */
export function makeNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Encodes one frame: the nonce, then one line of JSON.
 *
 * @param nonce the process's nonce ("" for host-to-sandbox frames)
 * @param json the message, already serialized (must not contain a newline)
 * @returns the framed line
 * @example
 * ```ts
 * import { encodeFrame } from "./pipe.ts";
 * import assert from "node:assert/strict";
 * assert.equal(encodeFrame("n0", '{"t":"ready"}'), 'n0{"t":"ready"}\n');
 * ```
 */
export function encodeFrame(nonce: string, json: string): string {
  return nonce + json + "\n";
}

/** Options for {@link FrameSplitter} and {@link readFrames}. */
export interface ReadFramesOptions {
  /** Only lines carrying this nonce are frames. @default "" (every line) */
  nonce?: string;
  /** Longer lines are dropped whole. @default 16 MiB */
  maxLineBytes?: number;
  /**
   * For {@link readFrames}: asked after each chunk's frames are handed
   * on, before the next read: a promise holds the next read until it settles, `null` reads at once.
   * A reader that expects nothing for now (no operation in flight) holds
   * the read until it writes again or the process exits. Asking for a
   * read runs the byte-stream machinery and an op synchronously; asked for
   * at once, it ran in the turn that had just completed an answer, before
   * the answer's WebSocket frame went out (an outcome reaches the
   * transport a few promise turns after its frame: the caller, the
   * handler, the dispatcher). Held, it runs after the next write, while
   * the sandbox works. Nothing is lost meanwhile: the pipe holds what
   * comes. @default never hold
   */
  hold?: () => Promise<void> | null;
}

/**
 * Splits pushed bytes into frames: drops over-long lines, keeps only those
 * carrying the nonce, and parses the JSON after it, handing each message to
 * a callback as soon as its line is complete. A garbage prefix before the
 * nonce (a skill printing without a newline) is skipped. Pushed chunks may
 * be reused by the caller afterwards: a partial line is copied.
 *
 * @example Frames split across chunks
 * ```ts
 * import { FrameSplitter } from "./pipe.ts";
 * import assert from "node:assert/strict";
 * const got: unknown[] = [];
 * const splitter = new FrameSplitter((m) => got.push(m), { nonce: "N1" });
 * const bytes = new TextEncoder().encode('hello\ngarbageN1{"t":"ok"}\n');
 * splitter.push(bytes.subarray(0, 12));
 * splitter.push(bytes.subarray(12));
 * assert.deepEqual(got, [{ t: "ok" }]);
 * ```
 */
export class FrameSplitter {
  readonly #onFrame: (message: unknown, json: string) => void;
  readonly #nonce: string;
  readonly #decoder = new TextDecoder();
  readonly #lines: LineSplitter;

  /**
   * @param onFrame called with each parsed message, in order, and its JSON
   *   text (a receiver that hands the message on can pass the text)
   * @param options nonce, line bound
   */
  constructor(
    onFrame: (message: unknown, json: string) => void,
    options: ReadFramesOptions = {},
  ) {
    this.#onFrame = onFrame;
    this.#nonce = options.nonce ?? "";
    this.#lines = new LineSplitter((line) => this.#line(line), {
      maxLineBytes: options.maxLineBytes,
    });
  }

  /**
   * Takes the next bytes of the stream.
   *
   * @param chunk bytes; not kept after the call returns
   */
  push(chunk: Uint8Array): void {
    this.#lines.push(chunk);
  }

  /** Ends the stream: a last line without a newline still counts. */
  end(): void {
    this.#lines.end();
  }

  // One complete line: a frame when it carries the nonce and JSON after it.
  #line(line: Uint8Array): void {
    const nonce = this.#nonce;
    // A nonce-framed line is the nonce and a JSON object: one too short for
    // that, or not ending in "}", is noise told from its bytes. Untrusted
    // code shares the stream and may print lines by the million; decoding
    // each, and throwing for each, held the reader's thread microseconds
    // a line.
    if (
      nonce !== "" &&
      (line.length < nonce.length + 2 || line[line.length - 1] !== CLOSE)
    ) return;
    const text = this.#decoder.decode(line);
    const at = nonce === "" ? 0 : text.lastIndexOf(nonce);
    if (at < 0) return;
    const json = text.slice(at + nonce.length);
    let message: unknown;
    try {
      message = JSON.parse(json);
    } catch {
      return;
    }
    this.#onFrame(message, json);
  }
}

// The last byte of every nonce-framed line ("}" of its JSON object).
const CLOSE = 0x7d;

/**
 * Reads frames from a byte stream with a {@link FrameSplitter}, calling
 * `onFrame` synchronously as each line completes (no async iterator between
 * the pipe and the message: fewer promise turns per frame).
 *
 * @param stream the sandbox's stdout (or the host's stdin, nonce "")
 * @param onFrame called with each parsed message, in order
 * @param options nonce, line bound, when to hold a read
 * @returns resolves when the stream ends; rejects when it errors
 * @example Skip noise
 * ```ts
 * import { readFrames } from "./pipe.ts";
 * import assert from "node:assert/strict";
 * const text = 'hello\nxx{"bad":1}\ngarbageN1{"t":"ok"}\n';
 * const got: unknown[] = [];
 * await readFrames(new Blob([text]).stream(), (m) => got.push(m), {
 *   nonce: "N1",
 * });
 * assert.deepEqual(got, [{ t: "ok" }]);
 * ```
 */
export async function readFrames(
  stream: ReadableStream<Uint8Array>,
  onFrame: (message: unknown) => void,
  options: ReadFramesOptions = {},
): Promise<void> {
  const splitter = new FrameSplitter(onFrame, options);
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = stream.getReader({ mode: "byob" });
  } catch {
    // Not a byte stream: read chunks as the stream makes them.
  }
  const reader = byob ?? stream.getReader();
  // One buffer for the whole stream: a default reader allocates a fresh
  // 64 KiB chunk for every read, which the GC then has to collect.
  let buffer = new Uint8Array(READ_CHUNK);
  try {
    while (true) {
      const { done, value } = byob === undefined
        ? await (reader as ReadableStreamDefaultReader<Uint8Array>).read()
        : await byob.read(buffer);
      if (done || value === undefined) break;
      splitter.push(value);
      // A BYOB read hands back the buffer it was given: read into it again.
      if (byob !== undefined) {
        buffer = new Uint8Array(value.buffer as ArrayBuffer);
      }
      const held = options.hold?.() ?? null;
      if (held !== null) await held;
    }
  } finally {
    reader.releaseLock();
  }
  splitter.end();
}
