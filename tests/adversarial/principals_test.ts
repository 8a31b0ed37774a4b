/**
 * One principal per sandbox process, tried as an attacker would against a
 * real host with real clients: code a session sent (`eval_typescript`)
 * reads the raw stdin of its process, or exhausts its heap, while another
 * session's call runs; a module reads raw stdin while a neighbour with the
 * same grant is called with a secret; and a flood of sessions each running
 * code tries to grow the number of sandbox processes without bound.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { createHost, type Host } from "../../runtime/host.ts";
import { type Client, connect } from "../../client/mod.ts";
import type { ToolOutcome } from "../../protocol/tool.ts";
import { privateSocketPath } from "../../runtime/private_sockets.ts";

interface Served {
  host: Host;
  url: string;
  close(): Promise<void>;
}

// A host serving the shipped skills (for eval_typescript) plus `skills`.
async function serve(
  options: { skills?: string[]; read?: string[]; maxProcesses?: number } = {},
): Promise<Served> {
  const host = createHost({
    config: {
      skills: options.skills ?? [],
      sandbox: {
        cacheDir: null,
        memoryMb: 128,
        maxIdleProcesses: 4,
        spareWorkers: 1,
        spareProcesses: 1,
        maxResultBytes: 1 << 20,
        maxProcesses: options.maxProcesses ?? 16,
        processWaitMs: 240_000,
      },
      limits: {
        maxMessageBytes: 4 << 20,
        maxSessions: 1024,
        maxParallel: 4,
        maxParallelHost: 512,
        sseIdleSeconds: 300,
        shutdownTimeoutSeconds: 1,
        maxTurns: 50,
        defaultMaxTurns: 10,
      },
      policy: { permissions: { read: options.read ?? [] } },
    },
  });
  const { errors } = await host.ready;
  assert.deepEqual(errors, []);
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  return {
    host,
    url: url.replace("http", "ws") + "/a2e",
    close: () => host.close({ timeoutSeconds: 1 }),
  };
}

function evalCode(
  client: Client,
  code: string,
  options: { timeout?: number; onEvent?: (e: unknown) => void } = {},
): Promise<ToolOutcome> {
  return client.tools.call("eval_typescript", { code }, {
    timeout: options.timeout ?? 30_000,
    onEvent: options.onEvent,
  });
}

// Resolves when the call emits its first event: its code is running.
function started(): { onEvent: () => void; running: Promise<void> } {
  let onEvent = () => {};
  const running = new Promise<void>((resolve) => onEvent = resolve);
  return { onEvent, running };
}

// Resolves when `running` does; fails (never hangs) when the call ends
// first without having started its code.
async function runningOrFailed(
  running: Promise<void>,
  call: Promise<unknown>,
): Promise<void> {
  await Promise.race([
    running,
    call.then((outcome) => {
      throw new Error(`Ended before it ran: ${JSON.stringify(outcome)}`);
    }),
  ]);
}

// The folder of this module's control sockets: every sandbox process a host
// here starts names its socket in its arguments. `deno test --parallel` runs
// other test modules in this same process (each with a folder of its own),
// so being a child of this process does not make a sandbox process ours.
const SOCKETS = dirname(privateSocketPath());

// Sandbox processes (not discovery ones) that hosts of this module started.
async function sandboxProcesses(): Promise<number> {
  const out = await new Deno.Command("ps", {
    args: ["--ppid", String(Deno.pid), "-o", "args="],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((line) =>
      line.includes("sandbox/process/main.ts") && line.includes(SOCKETS)
    ).length;
}

// Code that reads raw fd 0 of its process (Deno does not permission-check
// descriptors) and returns what it got.
const READ_FD0 = `
import { readSync } from "node:fs";
console.log("reading fd 0");
const buf = new Uint8Array(1 << 16);
const n = readSync(0, buf);
export default new TextDecoder().decode(buf.subarray(0, n));
`;

Deno.test({
  name:
    "eval_typescript of one session never reads another session's requests from fd 0",
  async fn() {
    const s = await serve();
    const a = await connect(s.url);
    const b = await connect(s.url);
    try {
      const reader = started();
      const stolen = evalCode(a, READ_FD0, {
        timeout: 4000,
        onEvent: reader.onEvent,
      });
      await runningOrFailed(reader.running, stolen);
      const secret = `secret-${crypto.randomUUID()}`;
      for (let i = 0; i < 3; i++) {
        const got = await evalCode(b, `"${secret}".length + ${i}`);
        assert.equal(got.success, true, got.error ?? "");
        assert.equal((got.data as { value: number }).value, secret.length + i);
      }
      const outcome = await stolen;
      assert.ok(!JSON.stringify(outcome).includes(secret), "A saw B's code");
      // Another session is unharmed, and A's session still works.
      const after = await evalCode(a, "1 + 1");
      assert.equal((after.data as { value: number }).value, 2);
    } finally {
      await a.close();
      await b.close();
      await s.close();
    }
  },
});

Deno.test("one session's memory bomb in eval_typescript never fails another session's eval", async () => {
  const s = await serve();
  const a = await connect(s.url);
  const b = await connect(s.url);
  try {
    // B's call is running (and takes a while) when A's heap runs out.
    const runner = started();
    const innocent = evalCode(
      b,
      `console.log("started");
       const until = Date.now() + 1500; let n = 0;
       while (Date.now() < until) n++;
       "survived"`,
      { onEvent: runner.onEvent },
    );
    await runningOrFailed(runner.running, innocent);
    const bomb = await evalCode(
      a,
      `const hoard = []; while (true) hoard.push(new Array(1e6).fill(Math.random()));`,
    );
    assert.equal(bomb.success, false);
    assert.equal(bomb.errorCode, "out_of_memory");
    const ok = await innocent;
    assert.equal(ok.success, true, ok.error ?? "");
    assert.equal((ok.data as { value: string }).value, "survived");
    const again = await evalCode(a, "'a again'");
    assert.equal((again.data as { value: string }).value, "a again");
  } finally {
    await a.close();
    await b.close();
    await s.close();
  }
});

Deno.test("a module reading fd 0 never sees the requests of another module with the same grant", async () => {
  const dir = await Deno.makeTempDir();
  // Each may read the other's folder, so both get the very same grant: the
  // process is still theirs alone, because the module is the principal.
  const write = async (name: string, other: string, run: string) => {
    await Deno.mkdir(join(dir, name));
    await Deno.writeTextFile(
      join(dir, name, "mod.ts"),
      `import { readSync } from "node:fs";
       void readSync;
       export default {
         kind: "tool", name: "${name}", description: "${name}",
         permissions: { read: ["../${other}"] },
         ${run}
       };`,
    );
  };
  await write(
    "snoop",
    "victim",
    `run(_args, ctx) {
       ctx.log("info", "reading fd 0");
       const buf = new Uint8Array(1 << 16);
       const n = readSync(0, buf);
       return new TextDecoder().decode(buf.subarray(0, n));
     },`,
  );
  await write("victim", "snoop", `run: (args) => ({ got: args.secret }),`);
  const s = await serve({ skills: [dir], read: [dir] });
  const client = await connect(s.url);
  const other = await connect(s.url);
  try {
    const reader = started();
    const snooping = client.tools.call("snoop", {}, {
      timeout: 4000,
      onEvent: reader.onEvent,
    });
    await runningOrFailed(reader.running, snooping);
    const secret = `secret-${crypto.randomUUID()}`;
    for (const c of [client, other]) {
      const got = await c.tools.call("victim", { secret });
      assert.equal(got.success, true, got.error ?? "");
      assert.deepEqual(got.data, { got: secret });
    }
    const outcome = await snooping;
    assert.ok(!JSON.stringify(outcome).includes(secret), "snoop saw victim's");
  } finally {
    await client.close();
    await other.close();
    await s.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "a flood of 300 sessions running eval_typescript stays under the process cap and every call succeeds",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const CAP = 8;
    const s = await serve({ maxProcesses: CAP });
    const clients = await Promise.all(
      Array.from({ length: 300 }, () => connect(s.url)),
    );
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await sandboxProcesses());
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      const outcomes = await Promise.all(
        clients.map((c, i) => evalCode(c, `${i} * 2`, { timeout: 240_000 })),
      );
      outcomes.forEach((o, i) => {
        assert.equal(o.success, true, `call ${i}: ${o.error}`);
        assert.equal((o.data as { value: number }).value, i * 2);
      });
    } finally {
      sampling = false;
      await sampler;
      await Promise.all(clients.map((c) => c.close()));
      await s.close();
    }
    assert.ok(peak > 0, "the sampler saw sandbox processes");
    assert.ok(peak <= CAP, `at most ${CAP} sandbox processes, saw ${peak}`);
  },
});

// Polls the number of sandbox processes until it is `want`, within a bound.
async function processesBecome(want: number, ms = 15_000): Promise<number> {
  const until = performance.now() + ms;
  let seen = await sandboxProcesses();
  while (seen !== want && performance.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    seen = await sandboxProcesses();
  }
  return seen;
}

Deno.test({
  name:
    "closing a session retires the process its eval_typescript ran in; another session keeps its own",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const s = await serve();
    const a = await connect(s.url);
    const b = await connect(s.url);
    try {
      for (const client of [a, b]) {
        const got = await evalCode(client, "globalThis.kept = 41; 1");
        assert.equal(got.success, true, got.error ?? "");
      }
      // A's, B's, and the spare started ahead of the next new session.
      assert.equal(await sandboxProcesses(), 3);
      await a.close();
      assert.equal(await processesBecome(2), 2, "A's process stayed alive");
      // B's process (and its state) is untouched.
      const b2 = await evalCode(b, "globalThis.kept + 1");
      assert.equal(b2.success, true, b2.error ?? "");
      assert.equal(await sandboxProcesses(), 2);
    } finally {
      await b.close();
      await s.close();
    }
  },
});
