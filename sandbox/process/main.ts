/**
 * The main thread of a sandbox process. Runs beside untrusted code (in the
 * same process, other threads), so it trusts nothing a worker sends: it
 * checks every message against the operations it gave that worker, bounds
 * sizes, and is the only writer of nonce-framed lines on stdout.
 *
 * Started by the host with the grant as process flags; the first stdin line
 * is an {@link InitMessage}. The host's later frames come on the control
 * socket named in its arguments (`protocol/sandbox/control.ts`), or on stdin
 * when none is named.
 *
 * @module
 */

import {
  decodeHostMessage,
  encodeFrame,
  type EventMessage,
  FrameSplitter,
  type FromWorkerMessage,
  type HostMessage,
  type InitMessage,
  MAX_MESSAGE_CHARS,
  type OpMessage,
  type SandboxMessage,
  type WorkerEvent,
} from "../../protocol/sandbox/pipe.ts";
import { serializeResult } from "./_truncate.ts";
import { readFrom, writeOut } from "./_stdio.ts";
import { type Slot, WorkerSlots } from "./workers.ts";
import { relayToken } from "../../protocol/egress_relay.ts";
import { controlSocketOf } from "../../protocol/sandbox/control.ts";
import { startEgressRelay } from "./egress_relay.ts";

// How long a worker has to answer an abort before the host treats it as
// busy (and kills the process).
const ABORT_ACK_MS = 150;

const encoder = new TextEncoder();
let init: InitMessage;
let slots: WorkerSlots;
// Aborts sent, by operation: the worker told, and what its answer does.
const abortAcks = new Map<string, { slot: Slot; ack: () => void }>();

function send(message: SandboxMessage): void {
  writeOut(encodeFrame(init.nonce, JSON.stringify(message)));
}

// A failed operation's answer. A worker's error text may be any length:
// the host's line bound holds a message this long. Only a crash is worth
// retrying (in a fresh worker).
function fail(
  id: string,
  code: "sandbox_crash" | "tool_error",
  message: string,
): void {
  send({
    t: "result",
    id,
    ok: false,
    code,
    message: message.slice(0, MAX_MESSAGE_CHARS),
    retryable: code === "sandbox_crash",
  });
}

// `json`: the operation's line as the host wrote it.
function runOp(msg: OpMessage, json: string): void {
  const slot = slots.takeReady(msg);
  if (slot !== null) runOn(slot, msg, json);
  else slots.takeInTurn(msg, (slot) => runOn(slot, msg, json));
}

function runOn(slot: Slot, msg: OpMessage, json: string): void {
  // A warm worker has its module: the operation goes to it first, and the
  // bookkeeping runs while the worker works (its answer comes in a later
  // macrotask, after this one has recorded the operation).
  if (slot.isLoaded) slot.worker.postMessage(json);
  slot.ops.add(msg.id);
  slots.byOp.set(msg.id, slot);
  if (!slot.isLoaded) {
    slots.load(slot, msg.path).then(
      () => postOp(slot, msg, json),
      (err) => loadFailed(slot, msg, err),
    );
  }
}

function loadFailed(slot: Slot, msg: OpMessage, err: unknown): void {
  if (!slot.ops.has(msg.id)) return;
  // A module that fails to load is not worth keeping warm.
  slots.retire(slot);
  slots.release(slot, msg.id);
  fail(msg.id, "tool_error", `Cannot load module: ${(err as Error).message}`);
}

// The worker gets the host's operation as it came, as its JSON text: a
// string crosses to the worker as one copy, where the object would be
// structured-cloned field by field on both threads. The worker parses it,
// reads the fields it needs and ignores the routing ones.
function postOp(slot: Slot, msg: OpMessage, json: string): void {
  if (slot.ops.has(msg.id)) slot.worker.postMessage(json);
}

function abort(id: string): void {
  // Still waiting for its turn, or not running (answered already): no
  // worker to stop.
  const slot = slots.cancelPending(id) ? undefined : slots.byOp.get(id);
  if (!slot) {
    send({ t: "stopped", id });
    return;
  }
  const timer = setTimeout(() => abortAcks.delete(id), ABORT_ACK_MS);
  abortAcks.set(id, {
    slot,
    ack: () => {
      clearTimeout(timer);
      // The worker's event loop answered, so it is not spinning: retiring
      // it (once its other operations end) really stops it.
      slots.retire(slot);
      slots.release(slot, id);
      send({ t: "stopped", id });
    },
  });
  slot.worker.postMessage({ t: "abort", id });
}

function onWorkerMessage(slot: Slot, msg: FromWorkerMessage): void {
  switch (msg.t) {
    case "ready":
      slot.onReady();
      return;
    case "loaded":
      slot.onLoad?.(null);
      return;
    case "load_error":
      slot.onLoad?.(msg.message);
      return;
    case "exit":
      slots.kill(slot, `Sandbox worker exited with code ${msg.code}`);
      return;
    case "aborted": {
      // Only the worker told answers for an operation: a module can make
      // its bootstrap say "aborted" for any id, and a forged answer would
      // keep another worker's spinning loop alive.
      const pending = abortAcks.get(msg.id);
      if (pending?.slot !== slot) return;
      abortAcks.delete(msg.id);
      pending.ack();
      return;
    }
    case "events":
      onEvents(slot, msg.batch);
      return;
    case "rpc":
      onRpc(slot, msg);
      return;
    case "result":
      onResult(slot, msg);
      return;
  }
}

function onEvents(slot: Slot, batch: WorkerEvent[]): void {
  let lines = "";
  for (const ev of batch) {
    if (!slot.ops.has(ev.id)) continue;
    let json = jsonOf({ t: "event", ...ev } satisfies EventMessage);
    if (json === null || json.length > init.maxEventBytes) {
      const what = json === null
        ? "an event that is not JSON"
        : "an oversized event";
      json = JSON.stringify(
        {
          t: "event",
          id: ev.id,
          kind: "log",
          data: { level: "warn", message: `Dropped ${what}` },
        } satisfies EventMessage,
      );
    }
    lines += encodeFrame(init.nonce, json);
  }
  // The ack waits for the pipe: that is the back-pressure on a flood.
  writeOut(lines);
  if (!slot.dead) slot.worker.postMessage({ t: "ack" });
}

function onRpc(slot: Slot, msg: FromWorkerMessage & { t: "rpc" }): void {
  if (!slot.ops.has(msg.id)) return;
  const json = jsonOf(msg.payload ?? null);
  if (json === null || json.length > init.maxEventBytes) {
    slot.worker.postMessage({
      t: "rpc_result",
      id: msg.id,
      rid: msg.rid,
      ok: false,
      error: json === null ? "Request is not JSON" : "Request too large",
    });
    return;
  }
  send({ ...msg, payload: JSON.parse(json) });
}

// A worker's value as JSON, or null when it has none: structured clone
// carries a BigInt or a cycle that JSON.stringify throws on, and a throw
// here would end the process with every call in it.
function jsonOf(value: unknown): string | null {
  try {
    return JSON.stringify(value);
  } catch {
    return null;
  }
}

function onResult(
  slot: Slot,
  msg: FromWorkerMessage & { t: "result" },
): void {
  const id = msg.id;
  if (!slot.ops.has(id)) return;
  if (!msg.ok) fail(id, "tool_error", msg.message);
  else {
    try {
      const { json, truncated } = serializeResult(
        msg.value,
        init.maxResultBytes,
      );
      writeOut(encodeFrame(
        init.nonce,
        `{"t":"result","id":${
          JSON.stringify(id)
        },"ok":true,"truncated":${truncated},"value":${json}}`,
      ));
    } catch (err) {
      const why = (err as Error).message;
      fail(id, "tool_error", `Result is not serializable: ${why}`);
    }
  }
  slots.release(slot, id);
  const next = slot.primeAfter;
  slot.primeAfter = null;
  if (next) slots.prime(next.primeKey, next.path);
}

// An operation's messages first, then those about the process's workers.
function onHostMessage(msg: HostMessage, json: string): void {
  if (msg.t === "op") runOp(msg, json);
  else if (msg.t === "abort") abort(msg.id);
  else if (msg.t === "rpc_result") {
    slots.byOp.get(msg.id)?.worker.postMessage(json);
  } else if (msg.t === "prime") slots.prime(msg.primeKey, msg.path);
  else if (msg.t === "end_session") slots.endSession(msg.session);
  else send({ t: "stats", id: msg.id, ...slots.stats(msg.session) });
}

function start(first: InitMessage): void {
  init = first;
  slots = new WorkerSlots({
    bootstrapUrl: URL.createObjectURL(
      new Blob([init.bootstrap], { type: "text/javascript" }),
    ),
    permissions: init.permissions,
    spares: init.spares,
    maxWarm: init.maxWarmWorkers,
    onMessage: onWorkerMessage,
    onCrash: (id, reason) => fail(id, "sandbox_crash", reason),
  });
  if (init.maxResidentMb > 0) watchResidentSize(init.maxResidentMb);
  // The host sends nothing else until it has this answer.
  slots.sparesReady().then(() => send({ t: "ready" }));
}

// How often the process's resident size is read (about 5 µs a read).
const RESIDENT_CHECK_MS = 100;

// V8's heap cap holds each isolate's heap alone: binary buffers are
// outside it, and each worker has a heap of its own. So the process reads
// its resident size and ends itself past the cap, the way V8 ends a
// process at its heap limit (exit code 133, "out of memory" on stderr),
// which the host reports as `out_of_memory`. Workers run on other
// threads: their code cannot hold this one's timer back.
function watchResidentSize(capMb: number): void {
  const cap = capMb * 1024 * 1024;
  setInterval(() => {
    const rss = Deno.memoryUsage().rss;
    if (rss <= cap) return;
    const mb = Math.round(rss / (1024 * 1024));
    try {
      Deno.stderr.writeSync(encoder.encode(
        `\nSandbox process out of memory: ${mb} MiB resident, over its cap of ${capMb} MiB\n`,
      ));
    } finally {
      Deno.exit(133);
    }
  }, RESIDENT_CHECK_MS);
}

async function main(): Promise<void> {
  let started = false;
  const splitter = new FrameSplitter((raw, json) => {
    if (started) {
      const msg = decodeHostMessage(raw);
      if (msg !== null) onHostMessage(msg, json);
    } else {
      started = true;
      start(raw as InitMessage);
    }
  }, { maxLineBytes: Number.MAX_SAFE_INTEGER });
  const control = controlSocketOf(Deno.args);
  if (control === null) await readFrom(Deno.stdin, splitter);
  else {
    // The init frame comes on stdin; the rest on the control socket, read
    // on this thread's event loop (stdin is read on a blocking-pool
    // thread). Proven with the init's nonce, the connection is ours alone.
    await readFrom(Deno.stdin, splitter, () => started);
    if (started) {
      const conn = await Deno.connect({ transport: "unix", path: control });
      const hello = encoder.encode(init.nonce + "\n");
      for (let at = 0; at < hello.length;) {
        at += await conn.write(hello.subarray(at));
      }
      await readFrom(conn, splitter);
    }
  }
  // The host closed its end: it is gone or retired this process.
  Deno.exit(0);
}

// Confined with a net grant: workers' fetch goes out through the relay.
const egressToken = relayToken(Deno.args);
if (egressToken !== null) startEgressRelay({ token: egressToken });
await main();
