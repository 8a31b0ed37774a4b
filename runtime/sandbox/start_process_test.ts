import assert from "node:assert/strict";
import { join } from "node:path";
import { SandboxProcess } from "./_process.ts";
import { loadBootstrap, sandboxCommand } from "./spawn.ts";
import { grantToFlags, grantToWorkerPermissions } from "./permissions.ts";
import { openControlSocket, startProcess, UNWRAPPED } from "./start_process.ts";
import { callOp, TEST_LIMITS } from "./_test_support.ts";
import type { SandboxOutcome } from "./types.ts";

function run(proc: SandboxProcess, path: string): Promise<SandboxOutcome> {
  return new Promise((resolve) => {
    proc.lease();
    proc.start(callOp(path, { n: 2 }), {
      onEvent() {},
      onRpc() {},
      onOutcome: resolve,
    });
  });
}

// Three calls answered, then the process stopped.
async function answersAndStops(
  proc: SandboxProcess,
  path: string,
): Promise<void> {
  await proc.ready;
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(await run(proc, path), {
      ok: true,
      value: 4,
      truncated: false,
    });
  }
  proc.kill();
  await proc.exited;
}

async function withModule(
  fn: (dir: string, path: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_start_" });
  const path = join(dir, "double.ts");
  await Deno.writeTextFile(
    path,
    "export default { run: (args: { n: number }) => args.n * 2 };\n",
  );
  try {
    await fn(dir, path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a started process runs operations sent on its control socket", async () => {
  await withModule(async (dir, path) => {
    const proc = startProcess(
      { ...TEST_LIMITS, cwd: dir },
      "k",
      { read: [dir] },
      await loadBootstrap(),
      UNWRAPPED,
    );
    await answersAndStops(proc, path);
  });
});

Deno.test("without a control socket (none can be made) a process takes every frame on stdin", async () => {
  await withModule(async (dir, path) => {
    const grant = { read: [dir] };
    const proc = new SandboxProcess({
      key: "k",
      command: sandboxCommand({
        flags: grantToFlags(grant, []),
        grant,
        memoryMb: TEST_LIMITS.memoryMb,
        cwd: dir,
      }),
      permissions: grantToWorkerPermissions(grant),
      bootstrap: await loadBootstrap(),
      spares: TEST_LIMITS.spareWorkers,
      maxWarmWorkers: TEST_LIMITS.maxWarmWorkers,
      maxResultBytes: TEST_LIMITS.maxResultBytes,
      maxEventBytes: TEST_LIMITS.maxEventBytes,
    });
    await answersAndStops(proc, path);
  });
});

Deno.test("openControlSocket gives a socket where Unix sockets work", () => {
  const control = openControlSocket();
  if (Deno.build.os === "windows") return;
  assert.ok(control !== null);
  control.close();
});
