/**
 * The main thread of a discovery process: reads the definitions of a batch
 * of modules, each in a fresh Worker whose `deno.permissions` is exactly
 * that module's own files (read only, nothing else), a few at a time.
 *
 * Runs beside untrusted code (other threads of this process), so it trusts
 * nothing a worker posts, and it is the only writer of nonce-framed lines
 * on stdout. The host writes one {@link DiscoveryInit} line and closes
 * stdin; that line is read whole before any worker starts, so a worker
 * reading fd 0 with `node:fs` finds only the end of the stream. The host
 * enforces each module's deadline and kills this process when one spins:
 * `worker.terminate()` cannot stop a busy loop.
 *
 * @module
 */

import {
  decodeWorkerMessage,
  type DiscoveryFrame,
  type DiscoveryInit,
  type DiscoveryModule,
  encodeFrame,
  FrameSplitter,
  MAX_MESSAGE_CHARS,
  type ToWorkerMessage,
} from "../../protocol/sandbox/pipe.ts";
import { serializeResult } from "./_truncate.ts";
import { readFrom, writeOut } from "./_stdio.ts";

function send(init: DiscoveryInit, frame: DiscoveryFrame | string): void {
  const json = typeof frame === "string" ? frame : JSON.stringify(frame);
  writeOut(encodeFrame(init.nonce, json));
}

function failed(init: DiscoveryInit, i: number, message: string): void {
  send(init, {
    t: "described",
    i,
    ok: false,
    message: message.slice(0, MAX_MESSAGE_CHARS),
  });
}

/** Describes one module in a worker of its own; resolves once answered. */
function describeOne(
  init: DiscoveryInit,
  bootstrapUrl: string,
  i: number,
  module: DiscoveryModule,
): Promise<void> {
  send(init, { t: "started", i });
  const worker = new Worker(bootstrapUrl, {
    type: "module",
    deno: {
      permissions: {
        read: module.read,
        write: false,
        net: false,
        env: false,
        run: false,
        sys: false,
        ffi: false,
        import: false,
      },
    },
  } as WorkerOptions);
  return new Promise<void>((resolve) => {
    let done = false;
    const finish = (answer: () => void) => {
      if (done) return;
      done = true;
      answer();
      worker.terminate();
      resolve();
    };
    worker.onerror = (e) => {
      e.preventDefault();
      finish(() => failed(init, i, `Module worker failed: ${e.message}`));
    };
    // Definitions nested too deep for this thread to copy back come as
    // this, not as a message: unheard, the module waits for its timeout.
    worker.onmessageerror = () => {
      finish(() =>
        failed(
          init,
          i,
          "Definitions cannot be read back: a value is nested too deep to copy",
        )
      );
    };
    const post = (message: ToWorkerMessage) => worker.postMessage(message);
    worker.onmessage = (e: MessageEvent<unknown>) => {
      const msg = decodeWorkerMessage(e.data);
      if (msg === null) return;
      if (msg.t === "ready") {
        post({ t: "load", path: module.path });
      } else if (msg.t === "loaded") {
        post({
          t: "op",
          id: "describe",
          op: "describe",
          path: module.path,
          export: "default",
          workerKey: "",
          args: null,
          config: {},
          metadata: {},
          session: "",
          call: "",
        });
      } else if (msg.t === "load_error") {
        finish(() => failed(init, i, `Cannot load module: ${msg.message}`));
      } else if (msg.t === "exit") {
        finish(() => failed(init, i, `Module exited with code ${msg.code}`));
      } else if (msg.t === "result" && msg.id === "describe") {
        finish(() =>
          msg.ok ? answer(init, i, msg.value) : failed(init, i, msg.message)
        );
      }
    };
  });
}

function answer(init: DiscoveryInit, i: number, value: unknown): void {
  try {
    const { json, truncated } = serializeResult(value, init.maxResultBytes);
    if (truncated) {
      failed(init, i, "Definitions are larger than the result limit");
    } else send(init, `{"t":"described","i":${i},"ok":true,"value":${json}}`);
  } catch (err) {
    failed(init, i, `Definitions are not serializable: ${String(err)}`);
  }
}

async function run(init: DiscoveryInit): Promise<void> {
  const bootstrapUrl = URL.createObjectURL(
    new Blob([init.bootstrap], { type: "text/javascript" }),
  );
  let next = 0;
  const lane = async () => {
    while (next < init.modules.length) {
      const i = next++;
      await describeOne(init, bootstrapUrl, i, init.modules[i]!);
    }
  };
  const lanes = Math.max(1, Math.min(init.workers, init.modules.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  // Loaded only now: nothing of node's compatibility layer at start-up.
  const { cpuUsage } = await import("node:process");
  const { user, system } = cpuUsage();
  send(init, { t: "done", cpuMs: (user + system) / 1000 });
}

async function readInit(): Promise<DiscoveryInit | null> {
  let init: DiscoveryInit | null = null;
  const splitter = new FrameSplitter((raw) => {
    init ??= raw as DiscoveryInit;
  }, { maxLineBytes: Number.MAX_SAFE_INTEGER });
  await readFrom(Deno.stdin, splitter, () => init !== null);
  return init;
}

const init = await readInit();
if (init !== null && init.t === "discover") await run(init);
Deno.exit(0);
