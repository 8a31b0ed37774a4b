import assert from "node:assert/strict";
import { SandboxProcess } from "./sandbox_process.ts";
import { Deadlines } from "../deadline.ts";
import { EgressBroker } from "../egress/broker.ts";
import { openEgressProxy } from "../egress/proxy.ts";
import { testPool } from "./_test_support.ts";
import type { CommandWrapper } from "../confine/sandbox_processes.ts";

const NONE = {
  read: false,
  write: false,
  net: false,
  env: false,
  run: false,
  sys: false,
  ffi: false,
  import: false,
} as const;

function proxy() {
  return openEgressProxy({
    broker: new EgressBroker({ resolve: () => Promise.resolve(["192.0.2.1"]) }),
    allow: ["example.test"],
  });
}

async function closed(path: string): Promise<void> {
  await assert.rejects(Deno.lstat(path), Deno.errors.NotFound);
  await assert.rejects(Deno.connect({ transport: "unix", path }));
}

Deno.test("a sandbox process that cannot be spawned closes the egress proxy opened for it", async () => {
  const opened = proxy();
  assert.ok((await Deno.lstat(opened.path)).isSocket);
  assert.throws(() =>
    new SandboxProcess({
      key: "k",
      command: {
        program: "/nonexistent/skillbox-deno",
        args: [],
        env: {},
        cwd: Deno.cwd(),
        release: () => opened.close(),
      },
      permissions: NONE,
      bootstrap: "",
      spares: 0,
      maxWarmWorkers: 1,
      maxResultBytes: 1024,
      maxEventBytes: 1024,
      deadlines: new Deadlines(),
    })
  );
  await closed(opened.path);
});

Deno.test("a pool whose process cannot be spawned fails the call, leaks no proxy, and starts no spare", async () => {
  const paths: string[] = [];
  const wrap: CommandWrapper = (command) => {
    const opened = proxy();
    paths.push(opened.path);
    return {
      ...command,
      program: "/nonexistent/skillbox-deno",
      release: () => opened.close(),
    };
  };
  const pool = testPool({
    spareProcesses: 1,
    wrapper: () => Promise.resolve(wrap),
  });
  try {
    await assert.rejects(
      Promise.resolve(
        pool.processFor({}, { principal: "session:a", session: "a" }),
      ),
    );
    assert.equal(paths.length, 1);
    for (const path of paths) await closed(path);
    assert.deepEqual([...pool.processes], []);
  } finally {
    await pool.close();
  }
});
