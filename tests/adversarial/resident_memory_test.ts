/**
 * A sandbox process is held to its memory as a whole. V8's heap cap
 * (`--max-old-space-size`) holds one isolate's heap only: binary buffers
 * live outside it, and each worker of a process has a heap of its own, so
 * a module could hold gigabytes under a "512 MiB" process. Past the
 * process's resident cap (its heap cap, its warm workers' budget and
 * Deno itself) the process ends and its calls fail with `out_of_memory`;
 * the next call gets a new process.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createSandbox,
  type SandboxOptions,
} from "../../runtime/sandbox/sandbox.ts";
import type { SandboxOutcome } from "../../runtime/sandbox/types.ts";

const NO_HOOKS = {
  onEvent() {},
  callTool: () => Promise.reject(new Error("No tools in this test")),
  chat: () => Promise.reject(new Error("No LLM in this test")),
};

async function withModule(
  run: string,
  options: SandboxOptions,
  test: (
    call: (
      isolation: "warm" | "per-call",
      args?: Record<string, unknown>,
    ) => Promise<SandboxOutcome>,
  ) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  const path = join(dir, "mod.ts");
  await Deno.writeTextFile(
    path,
    `const kept = [];\nexport default { kind: "tool", name: "m", description: "m", run: ${run} };\n`,
  );
  const sandbox = createSandbox({ cacheDir: null, ...options });
  try {
    await test((isolation, args = {}) =>
      sandbox.call({
        path,
        export: "default",
        version: "v1",
        args,
        grant: {},
        timeoutMs: 30_000,
        sessionId: "s1",
        callId: crypto.randomUUID(),
        config: {},
        metadata: {},
        isolation,
      }, NO_HOOKS)
    );
  } finally {
    await sandbox.close();
    await Deno.remove(dir, { recursive: true });
  }
}

function assertOutOfMemory(outcome: SandboxOutcome): void {
  assert.equal(outcome.ok, false, JSON.stringify(outcome));
  assert.equal(!outcome.ok && outcome.code, "out_of_memory");
}

Deno.test("binary buffers past a process's memory end it with out_of_memory, and the next call runs", async () => {
  await withModule(
    `(args) => {
       if (args.small) return "ok";
       for (let i = 0; i < 16; i++) kept.push(new Uint8Array(64 << 20).fill(1));
       return new Promise(() => {});
     }`,
    { memoryMb: 64, maxWarmWorkers: 2 },
    async (call) => {
      assertOutOfMemory(await call("warm"));
      assert.deepEqual(await call("warm", { small: true }), {
        ok: true,
        value: "ok",
        truncated: false,
      });
    },
  );
});

Deno.test("workers each under the heap cap cannot together pass the process's memory", async () => {
  // Four calls at once, each in a fresh worker holding 80 MiB of heap
  // (under the 128 MiB heap cap): 320 MiB against a process held to
  // 128 + 4 * 6 + 128 = 280 MiB.
  await withModule(
    `() => {
       for (let i = 0; i < 80; i++) kept.push(new Array(1 << 17).fill(i + 0.5));
       return new Promise(() => {});
     }`,
    { memoryMb: 128, maxWarmWorkers: 4, spareWorkers: 0 },
    async (call) => {
      const outcomes = await Promise.all(
        [1, 2, 3, 4].map(() => call("per-call")),
      );
      for (const outcome of outcomes) assertOutOfMemory(outcome);
    },
  );
});
