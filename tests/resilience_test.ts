/**
 * Hostile conditions on the full host: a client that vanishes mid-call and a
 * tool that spins past its timeout, while another session keeps being
 * served. Driven with raw A2E JSON over real WebSockets.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost } from "../runtime/host.ts";
import { connectClient } from "./support/tools_harness.ts";

const waitForAbort = (markers: string) => `
export default {
  kind: "tool",
  name: "wait_for_abort",
  description: "Works until cancelled, then records that it was",
  permissions: { write: [${JSON.stringify(markers)}] },
  input: { type: "object", properties: { marker: { type: "string" } }, required: ["marker"] },
  async run(args, ctx) {
    ctx.progress(1, "started");
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    await Deno.writeTextFile(args.marker, "aborted");
    return "cancelled";
  },
};`;

const SPIN = `
export default {
  kind: "tool",
  name: "spin",
  description: "Never returns and ignores cancellation",
  run() { while (true) {} },
};`;

const ECHO = `
export default {
  kind: "tool",
  name: "echo",
  description: "Returns its input",
  input: { type: "object" },
  run: (args) => args,
};`;

/** Resolves once `path` exists, watching its folder (bounded). */
async function created(path: string, ms: number): Promise<void> {
  const dir = join(path, "..");
  const watcher = Deno.watchFs(dir);
  const timer = setTimeout(() => watcher.close(), ms);
  try {
    try {
      await Deno.stat(path);
      return;
    } catch { /* not yet: watch */ }
    for await (const event of watcher) {
      if (event.paths.includes(path)) return;
    }
    throw new Error(`"${path}" was not created within ${ms} ms`);
  } finally {
    clearTimeout(timer);
    try {
      watcher.close();
    } catch { /* closed by the timer */ }
  }
}

Deno.test("the host keeps serving while one client vanishes mid-call and another spins", async () => {
  const skills = await Deno.makeTempDir();
  const markers = await Deno.makeTempDir();
  await Deno.writeTextFile(
    join(skills, "wait_for_abort.ts"),
    waitForAbort(markers),
  );
  await Deno.writeTextFile(join(skills, "spin.ts"), SPIN);
  await Deno.writeTextFile(join(skills, "echo.ts"), ECHO);
  const host = createHost({
    config: {
      skills: [skills],
      builtinSkills: false,
      sandbox: {
        cacheDir: null,
        memoryMb: 256,
        maxIdleProcesses: 8,
        spareWorkers: 1,
        maxResultBytes: 1 << 20,
      },
      policy: { permissions: { write: [markers] } },
    },
  });
  await host.ready;
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  const wsUrl = url.replace("http", "ws") + "/a2e";
  const marker = join(markers, "aborted");
  try {
    const steady = await connectClient(wsUrl);
    const spinner = await connectClient(wsUrl);

    // The leaver starts a call, sees it running, then drops the connection
    // without a word.
    const leaver = new WebSocket(wsUrl);
    const running = new Promise<void>((resolve, reject) => {
      leaver.onmessage = (e) => {
        if (JSON.parse(String(e.data)).type === "tool/event") resolve();
      };
      leaver.onerror = () => reject(new Error("leaver failed"));
    });
    await new Promise((resolve) => leaver.onopen = resolve);
    leaver.send(JSON.stringify({
      type: "tool/call/req",
      id: "gone",
      tool_name: "wait_for_abort",
      arguments: { marker },
      streaming: true,
      timeout: 60,
    }));
    await running;
    const left = new Promise((resolve) => leaver.onclose = resolve);
    leaver.close();
    await left;

    // The spinner's tool burns a CPU until its timeout kills it.
    const spun = spinner.request("tool/call/req", {
      tool_name: "spin",
      arguments: {},
      timeout: 1,
    });

    // Meanwhile the steady session is served, call after call.
    for (let i = 0; i < 20; i++) {
      const { final } = await steady.request("tool/call/req", {
        tool_name: "echo",
        arguments: { i },
      });
      const result = final.data as { success: boolean; data: unknown };
      assert.equal(result.success, true);
      assert.deepEqual(result.data, { i });
    }

    // The vanished client's call was cancelled inside the sandbox.
    await created(marker, 5000);
    assert.equal(await Deno.readTextFile(marker), "aborted");

    const spin = (await spun).final.data as { error_code: string };
    assert.equal(spin.error_code, "timeout");

    // And a new session is served as if nothing happened.
    const fresh = await connectClient(wsUrl);
    const { final } = await fresh.request("tool/call/req", {
      tool_name: "echo",
      arguments: { ok: true },
    });
    assert.deepEqual((final.data as { data: unknown }).data, { ok: true });
    await Promise.all([steady.close(), spinner.close(), fresh.close()]);
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(skills, { recursive: true });
    await Deno.remove(markers, { recursive: true });
  }
});
