import assert from "node:assert/strict";
import { join } from "node:path";
import { loadBootstrap } from "./bootstrap_text.ts";
import { MAX_RPCS_IN_FLIGHT } from "../../protocol/sandbox/pipe.ts";

type Posted = { t: string; [key: string]: unknown };

// One worker running the real bootstrap, with this test as its process.
async function startWorker(dir: string) {
  const url = URL.createObjectURL(
    new Blob([await loadBootstrap()], { type: "text/javascript" }),
  );
  const worker = new Worker(url, {
    type: "module",
    deno: { permissions: { read: [dir], net: false, env: false } },
  } as WorkerOptions);
  const inbox: Posted[] = [];
  const waiters: (() => void)[] = [];
  worker.onmessage = (e: MessageEvent<Posted>) => {
    inbox.push(e.data);
    if (e.data.t === "events") worker.postMessage({ t: "ack" });
    for (const wake of waiters.splice(0)) wake();
  };
  const next = async (t: string): Promise<Posted> => {
    const deadline = Date.now() + 10_000;
    while (true) {
      const at = inbox.findIndex((m) => m.t === t);
      if (at >= 0) return inbox.splice(at, 1)[0]!;
      if (Date.now() > deadline) throw new Error(`No "${t}" from the worker`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  await next("ready");
  return { worker, next, inbox };
}

function op(id: string, path: string): string {
  return JSON.stringify({
    t: "op",
    id,
    op: "call",
    path,
    export: "default",
    workerKey: "k",
    args: {},
    config: {},
    metadata: {},
    session: "s",
    call: "c",
  });
}

Deno.test("ctx.signal is aborted by an abort, whether read before or after it", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  const path = join(dir, "wait.ts");
  await Deno.writeTextFile(
    path,
    `export default { kind: "tool", name: "wait", run: async (args, ctx) => {
      const early = args.early ? ctx.signal : null;
      const heard = [];
      early?.addEventListener("abort", () => heard.push("event"));
      await new Promise((r) => setTimeout(r, 300));
      ctx.log("info", JSON.stringify({ aborted: ctx.signal.aborted,
        same: early === null || early === ctx.signal, heard,
        reason: ctx.signal.reason?.name ?? null }));
      return 1;
    } };`,
  );
  const { worker, next } = await startWorker(dir);
  try {
    worker.postMessage({ t: "load", path });
    await next("loaded");
    const cases = [
      { id: "late", early: false, abort: true },
      { id: "early", early: true, abort: true },
      { id: "calm", early: true, abort: false },
    ];
    for (const c of cases) {
      const message = JSON.parse(op(c.id, path));
      message.args = { early: c.early };
      worker.postMessage(JSON.stringify(message));
      if (c.abort) {
        worker.postMessage({ t: "abort", id: c.id });
        assert.equal((await next("aborted")).id, c.id);
      }
      const events = await next("events");
      const batch = events.batch as { id: string; data: { message: string } }[];
      const seen = JSON.parse(batch[0]!.data.message);
      assert.equal(batch[0]!.id, c.id);
      assert.deepEqual(seen, {
        aborted: c.abort,
        same: true,
        heard: c.abort && c.early ? ["event"] : [],
        reason: c.abort ? "AbortError" : null,
      }, c.id);
      assert.equal((await next("result")).id, c.id);
    }
  } finally {
    worker.terminate();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ctx requests past MAX_RPCS_IN_FLIGHT wait in the worker, and all are answered in order", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  const path = join(dir, "many.ts");
  await Deno.writeTextFile(
    path,
    `export default { kind: "tool", name: "many", run: (_args, ctx) =>
      Promise.all(Array.from({ length: 40 }, (_, i) => ctx.fetch({ url: String(i) }))) };`,
  );
  const { worker, next, inbox } = await startWorker(dir);
  try {
    worker.postMessage({ t: "load", path });
    await next("loaded");
    worker.postMessage(op("1", path));
    let answered = 0;
    while (answered < 40) {
      const batch = [];
      for (let i = 0; i < Math.min(MAX_RPCS_IN_FLIGHT, 40 - answered); i++) {
        batch.push(await next("rpc"));
      }
      // Everything the worker posted before this answer is in the inbox.
      worker.postMessage({ t: "abort", id: "none" });
      await next("aborted");
      assert.equal(inbox.filter((m) => m.t === "rpc").length, 0);
      for (const rpc of batch) {
        const url = (rpc.payload as { url: string }).url;
        worker.postMessage({
          t: "rpc_result",
          id: "1",
          rid: rpc.rid,
          ok: true,
          value: url,
        });
        answered++;
      }
    }
    const result = await next("result");
    assert.deepEqual(
      result.value,
      Array.from({ length: 40 }, (_, i) => String(i)),
    );
  } finally {
    worker.terminate();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ctx.artifact sends text and bytes as base64 of their UTF-8", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  const path = join(dir, "art.ts");
  await Deno.writeTextFile(
    path,
    `export default { kind: "tool", name: "art", run: (args, ctx) => {
      ctx.artifact("a.txt", "text/plain", "héllo");
      ctx.artifact("b.bin", "application/octet-stream", new Uint8Array([0, 255, 62, 63]), true);
      return 1;
    } };`,
  );
  const { worker, next } = await startWorker(dir);
  try {
    worker.postMessage({ t: "load", path });
    await next("loaded");
    worker.postMessage(op("a", path));
    const batch: { kind: string; data: Record<string, unknown> }[] = [];
    while (batch.length < 2) {
      batch.push(...(await next("events")).batch as typeof batch);
    }
    assert.deepEqual(batch.map((e) => [e.kind, e.data]), [
      ["artifact", {
        name: "a.txt",
        mime: "text/plain",
        chunk: "aMOpbGxv",
        final: false,
      }],
      ["artifact", {
        name: "b.bin",
        mime: "application/octet-stream",
        chunk: "AP8+Pw==",
        final: true,
      }],
    ]);
    assert.equal((await next("result")).id, "a");
  } finally {
    worker.terminate();
    await Deno.remove(dir, { recursive: true });
  }
});
