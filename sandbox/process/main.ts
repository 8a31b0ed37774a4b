/**
 * The main thread of a sandbox process. Runs beside untrusted code (in the
 * same process, other threads), so it trusts nothing a worker sends: it
 * checks every message against the operations it gave that worker, bounds
 * sizes, and is the only writer of nonce-framed lines on stdout.
 *
 * Started by the host with the grant as process flags; the first stdin line
 * is an {@link InitMessage}.
 *
 * @module
 */

import { encodeFrame, FrameSplitter } from "../../protocol/sandbox/frames.ts";
import { serializeResult } from "../_truncate.ts";
import type {
  HostMessage,
  InitMessage,
  OpMessage,
  SandboxMessage,
} from "../../protocol/sandbox/messages.ts";

/** One worker and the operations it runs. */
interface Slot {
  worker: Worker;
  key: string;
  ready: Promise<void>;
  loaded: Promise<void> | null;
  /** Set once `loaded` has resolved: operations skip the await. */
  isLoaded: boolean;
  ops: Set<string>;
  /** Discarded once its operations end (per-call, aborted, or evicted). */
  retiring: boolean;
  dead: boolean;
  onReady: () => void;
  onLoad: ((error: string | null) => void) | null;
  /** Pre-load a replacement with this module once the operation is answered. */
  primeAfter: { primeKey: string; path: string } | null;
}

// How long a worker has to answer an abort before the host treats it as
// busy (and kills the process).
const ABORT_ACK_MS = 150;

const encoder = new TextEncoder();
let init: InitMessage;
let bootstrapUrl: string;
const spares: Slot[] = [];
const warm = new Map<string, Slot>();
// Fresh workers with a module already loaded, per module version, for
// per-call isolation (one each; least recently used dropped first).
const primed = new Map<string, Slot>();
const opSlot = new Map<string, Slot>();
const abortAcks = new Map<string, () => void>();
// Written synchronously: an async write runs on a blocking-pool thread, one
// more thread hop on every answer. The host always drains the pipe, so a
// full pipe stalls this thread only briefly, and that stall is the
// back-pressure on an event flood.
function write(lines: string): void {
  const bytes = encoder.encode(lines);
  let at = 0;
  try {
    while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at));
  } catch {
    // The host closed the pipe: it is gone.
    Deno.exit(0);
  }
}

function send(message: SandboxMessage): void {
  write(encodeFrame(init.nonce, JSON.stringify(message)));
}

function spawn(key: string): Slot {
  const worker = new Worker(bootstrapUrl, {
    type: "module",
    // deno-lint-ignore no-explicit-any
    deno: { permissions: init.permissions as any },
  } as WorkerOptions);
  let onReady = () => {};
  const ready = new Promise<void>((resolve) => onReady = resolve);
  const slot: Slot = {
    worker,
    key,
    ready,
    loaded: null,
    isLoaded: false,
    ops: new Set(),
    retiring: false,
    dead: false,
    onReady,
    onLoad: null,
    primeAfter: null,
  };
  worker.onmessage = (e) => onWorkerMessage(slot, e.data);
  worker.onerror = (e) => {
    e.preventDefault();
    kill(slot, `Sandbox worker failed: ${e.message}`);
  };
  return slot;
}

function refillSpares(): void {
  while (spares.length < init.spares) spares.push(spawn(""));
}

function kill(slot: Slot, reason: string): void {
  if (slot.dead) return;
  slot.dead = true;
  slot.worker.terminate();
  if (warm.get(slot.key) === slot) warm.delete(slot.key);
  slot.onLoad?.(reason);
  for (const id of slot.ops) {
    opSlot.delete(id);
    send({
      t: "result",
      id,
      ok: false,
      code: "sandbox_crash",
      message: reason,
      retryable: true,
    });
  }
  slot.ops.clear();
}

function release(slot: Slot, id: string): void {
  slot.ops.delete(id);
  opSlot.delete(id);
  if (slot.retiring && slot.ops.size === 0 && !slot.dead) {
    slot.dead = true;
    slot.worker.terminate();
  }
}

function evictWarm(): void {
  for (const [key, slot] of warm) {
    if (warm.size <= init.maxWarmWorkers) break;
    if (slot.ops.size > 0) continue;
    warm.delete(key);
    slot.dead = true;
    slot.worker.terminate();
  }
}

function prime(primeKey: string, path: string): void {
  if (primed.has(primeKey)) return;
  const slot = spawn("");
  slot.retiring = true;
  load(slot, path).catch(() => {});
  primed.set(primeKey, slot);
  for (const [key, old] of primed) {
    if (primed.size <= init.maxWarmWorkers) break;
    primed.delete(key);
    old.dead = true;
    old.worker.terminate();
  }
}

function take(key: string, primeKey?: string, path?: string): Slot {
  if (key === "" && primeKey !== undefined && path !== undefined) {
    const hit = primed.get(primeKey);
    primed.delete(primeKey);
    if (hit && !hit.dead) {
      // Starting a worker blocks this thread for milliseconds: do it after
      // the answer is out, not on the call's path.
      hit.primeAfter = { primeKey, path };
      return hit;
    }
    queueMicrotask(() => prime(primeKey, path));
  }
  if (key !== "") {
    const hit = warm.get(key);
    if (hit && !hit.dead && !hit.retiring) {
      warm.delete(key);
      warm.set(key, hit);
      return hit;
    }
  }
  const slot = spares.shift() ?? spawn("");
  queueMicrotask(refillSpares);
  slot.key = key;
  if (key === "") slot.retiring = true;
  else {
    warm.set(key, slot);
    evictWarm();
  }
  return slot;
}

function load(slot: Slot, path: string): Promise<void> {
  slot.loaded ??= slot.ready.then(() =>
    new Promise<void>((resolve, reject) => {
      slot.onLoad = (error) => {
        slot.onLoad = null;
        if (error === null) {
          slot.isLoaded = true;
          resolve();
        } else reject(new Error(error));
      };
      slot.worker.postMessage({ t: "load", path });
    })
  );
  return slot.loaded;
}

function runOp(msg: OpMessage): void {
  const slot = take(msg.workerKey, msg.primeKey, msg.path);
  slot.ops.add(msg.id);
  opSlot.set(msg.id, slot);
  // A warm worker has its module: post at once, not after an await (which
  // would queue behind the next stdin read being started).
  if (slot.isLoaded) postOp(slot, msg);
  else {
    load(slot, msg.path).then(
      () => postOp(slot, msg),
      (err) => loadFailed(slot, msg, err),
    );
  }
}

function loadFailed(slot: Slot, msg: OpMessage, err: unknown): void {
  if (!slot.ops.has(msg.id)) return;
  // A module that fails to load is not worth keeping warm.
  slot.retiring = true;
  if (warm.get(slot.key) === slot) warm.delete(slot.key);
  release(slot, msg.id);
  send({
    t: "result",
    id: msg.id,
    ok: false,
    code: "tool_error",
    message: `Cannot load module: ${(err as Error).message}`,
    retryable: false,
  });
}

function postOp(slot: Slot, msg: OpMessage): void {
  if (!slot.ops.has(msg.id)) return;
  slot.worker.postMessage({
    t: "op",
    id: msg.id,
    op: msg.op,
    export: msg.export,
    args: msg.args,
    config: msg.config,
    metadata: msg.metadata,
    session: msg.session,
    call: msg.call,
  });
}

function abort(id: string): void {
  const slot = opSlot.get(id);
  if (!slot) {
    send({ t: "stopped", id });
    return;
  }
  const timer = setTimeout(() => abortAcks.delete(id), ABORT_ACK_MS);
  abortAcks.set(id, () => {
    clearTimeout(timer);
    // The worker's event loop answered, so it is not spinning: retiring it
    // (once its other operations end) really stops it.
    slot.retiring = true;
    if (warm.get(slot.key) === slot) warm.delete(slot.key);
    release(slot, id);
    send({ t: "stopped", id });
  });
  slot.worker.postMessage({ t: "abort", id });
}

// deno-lint-ignore no-explicit-any
function onWorkerMessage(slot: Slot, msg: any): void {
  if (typeof msg !== "object" || msg === null || slot.dead) return;
  switch (msg.t) {
    case "ready":
      slot.onReady();
      return;
    case "loaded":
      slot.onLoad?.(null);
      return;
    case "load_error":
      slot.onLoad?.(String(msg.message));
      return;
    case "exit":
      kill(slot, `Sandbox worker exited with code ${Number(msg.code)}`);
      return;
    case "aborted":
      abortAcks.get(String(msg.id))?.();
      abortAcks.delete(String(msg.id));
      return;
    case "events": {
      let lines = "";
      for (const ev of Array.isArray(msg.batch) ? msg.batch : []) {
        if (!slot.ops.has(ev?.id)) continue;
        let json = JSON.stringify({
          t: "event",
          id: ev.id,
          kind: String(ev.kind),
          data: ev.data,
        });
        if (json.length > init.maxEventBytes) {
          json = JSON.stringify({
            t: "event",
            id: ev.id,
            kind: "log",
            data: { level: "warn", message: "Dropped an oversized event" },
          });
        }
        lines += encodeFrame(init.nonce, json);
      }
      // The ack waits for the pipe: that is the back-pressure on a flood.
      write(lines);
      if (!slot.dead) slot.worker.postMessage({ t: "ack" });
      return;
    }
    case "rpc": {
      const id = String(msg.id);
      if (!slot.ops.has(id)) return;
      const json = JSON.stringify(msg.payload ?? null);
      if (json.length > init.maxEventBytes) {
        slot.worker.postMessage({
          t: "rpc_result",
          id,
          rid: msg.rid,
          ok: false,
          error: "Request too large",
        });
        return;
      }
      send({
        t: "rpc",
        id,
        rid: Number(msg.rid),
        method: msg.method === "chat" ? "chat" : "tool",
        payload: JSON.parse(json),
      });
      return;
    }
    case "result": {
      const id = String(msg.id);
      if (!slot.ops.has(id)) return;
      let line: string;
      if (msg.ok !== true) {
        line = JSON.stringify({
          t: "result",
          id,
          ok: false,
          code: msg.code === "schema_violation"
            ? "schema_violation"
            : "tool_error",
          message: String(msg.message).slice(0, 4096),
          retryable: false,
        });
      } else {
        try {
          const { json, truncated } = serializeResult(
            msg.value,
            init.maxResultBytes,
          );
          line = `{"t":"result","id":${
            JSON.stringify(id)
          },"ok":true,"truncated":${truncated},"value":${json}}`;
        } catch (err) {
          line = JSON.stringify({
            t: "result",
            id,
            ok: false,
            code: "tool_error",
            message: `Result is not serializable: ${(err as Error).message}`,
            retryable: false,
          });
        }
      }
      write(encodeFrame(init.nonce, line));
      release(slot, id);
      const next = slot.primeAfter;
      slot.primeAfter = null;
      if (next) prime(next.primeKey, next.path);
      return;
    }
  }
}

function onHostMessage(msg: HostMessage): void {
  if (msg.t === "op") {
    runOp(msg);
  } else if (msg.t === "abort") abort(msg.id);
  else if (msg.t === "rpc_result") opSlot.get(msg.id)?.worker.postMessage(msg);
}

function start(first: InitMessage): void {
  init = first;
  bootstrapUrl = URL.createObjectURL(
    new Blob([init.bootstrap], { type: "application/typescript" }),
  );
  refillSpares();
  // The host sends nothing else until it has this answer.
  Promise.all(spares.map((s) => s.ready)).then(() => send({ t: "ready" }));
}

async function main(): Promise<void> {
  let started = false;
  const splitter = new FrameSplitter((raw) => {
    if (started) onHostMessage(raw as HostMessage);
    else {
      started = true;
      start(raw as InitMessage);
    }
  }, { maxLineBytes: Number.MAX_SAFE_INTEGER });
  // Read straight from stdin into one buffer: no stream, no async iterator,
  // one promise per chunk.
  const buffer = new Uint8Array(64 * 1024);
  while (true) {
    const n = await Deno.stdin.read(buffer);
    if (n === null) break;
    splitter.push(buffer.subarray(0, n));
  }
  // The host closed stdin: it is gone or retired this process.
  Deno.exit(0);
}

await main();
