/**
 * A seeded fuzz campaign against hosts in their own processes: mutants of
 * every A2E request type over WebSocket, HTTP+SSE and stdio, and of MCP
 * requests over `/mcp` and `--mcp` stdio (`tests/support/fuzz.ts`); clients
 * that vanish mid-call on each transport; messages after a shutdown. After
 * each batch: every readable id answered exactly once in a documented shape
 * (an error never InternalError, never a stack trace), no HTTP 500, nothing
 * uncaught on the host's stderr, and the host still serves a fresh session,
 * a trivial call and its history, where every vanished call has ended.
 *
 * Deterministic: fixed seeds and counts. A longer campaign:
 * `FUZZ_SEED=7 FUZZ_COUNT=300 FUZZ_BATCHES=4 deno test ... fuzz_test.ts`
 * (`FUZZ_VERBOSE=1` prints what came back, `FUZZ_DUMP=<file>` keeps every
 * A2E answer as NDJSON). The defects it found are held by plain tests in
 * `fuzz_findings_test.ts` and beside the code.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { HOST_FLAGS, HOST_MAIN } from "../support/host_cli.ts";
import { a2eMutants } from "../support/fuzz.ts";
import {
  type A2eWire,
  assertA2eServes,
  assertA2eShape,
  assertHistoryReadable,
  assertMcpServes,
  crashLines,
  driveA2eBatch,
  driveMcpBatch,
  driveMcpStdioBatch,
  mcpOpen,
  sseWire,
  stdioWire,
  STUCK_MS,
  wsWire,
} from "../support/fuzz_drive.ts";
import { startHostProcess } from "./_host_process.ts";

const SKILLS = fileURLToPath(new URL("../fixtures/fuzz/", import.meta.url));
const SEED = Number(Deno.env.get("FUZZ_SEED") ?? 1);
const COUNT = Number(Deno.env.get("FUZZ_COUNT") ?? 60);
const BATCHES = Number(Deno.env.get("FUZZ_BATCHES") ?? 2);

Deno.test("fuzzed A2E and MCP messages get clear answers and the host serves on", async (t) => {
  await using host = await startHostProcess({ skills: [SKILLS] });
  // What the host said, when a step fails (it may have died).
  const said = () => host.lines.slice(-40).join("\n");
  const wsUrl = `${host.url.replace("http", "ws")}/a2e`;
  const after = async (what: string) => {
    assert.deepEqual(crashLines(host.lines), [], `after ${what}`);
    const fresh = await wsWire(wsUrl);
    await assertA2eServes(fresh);
    await fresh.close();
    await assertHistoryReadable(host.url);
  };
  for (let b = 0; b < BATCHES; b++) {
    await t.step(`WebSocket batch ${b}`, () =>
      explained(said, async () => {
        const wire = await wsWire(wsUrl);
        await driveA2eBatch(wire, {
          seed: SEED * 1000 + b,
          count: COUNT,
          handshake: b % 2 === 0,
          prefix: "w",
        });
        await wire.close();
        await after(`WebSocket batch ${b}`);
      }));
    await t.step(`HTTP+SSE batch ${b}`, () =>
      explained(said, async () => {
        const wire = await sseWire(`${host.url}/a2e`);
        await driveA2eBatch(wire, {
          seed: SEED * 1000 + 100 + b,
          count: COUNT,
          handshake: b % 2 === 1,
          prefix: "s",
        });
        await wire.close();
        await after(`HTTP+SSE batch ${b}`);
      }));
    await t.step(`MCP batch ${b}`, () =>
      explained(said, async () => {
        const session = await mcpOpen(`${host.url}/mcp`);
        await driveMcpBatch(`${host.url}/mcp`, {
          seed: SEED * 1000 + 200 + b,
          count: COUNT,
          session,
        });
        await after(`MCP batch ${b}`);
        await assertMcpServes(`${host.url}/mcp`);
      }));
  }
});

Deno.test("on a host with tokens, fuzzed messages before an accepted handshake are answered and serve nothing", async () => {
  await using host = await startHostProcess({
    skills: [SKILLS],
    tokens: ["tok-fuzz-5c1e07a9"],
  });
  const said = () => host.lines.slice(-40).join("\n");
  await explained(said, async () => {
    for (let b = 0; b < BATCHES; b++) {
      for (
        const wire of [
          await wsWire(`${host.url.replace("http", "ws")}/a2e`),
          await sseWire(`${host.url}/a2e`),
        ]
      ) {
        await driveA2eBatch(wire, {
          seed: SEED * 1000 + 500 + b,
          count: COUNT,
          handshake: b % 2 === 0,
          prefix: "t",
        });
        // No fuzzed handshake holds the token: nothing is served.
        for (const msg of wire.received) {
          assert.ok(
            msg.type === "error" ||
              (msg.type === "handshake/resp" && msg.ok === false),
            JSON.stringify(msg).slice(0, 400),
          );
        }
        await wire.close();
      }
    }
    assert.deepEqual(crashLines(host.lines), []);
  });
});

Deno.test("clients that vanish mid-call, or speak after a shutdown, cost the host nothing and lose no run", async (t) => {
  // An HTTP+SSE client that drops its stream may reconnect: its session
  // and calls live on until it has been idle this long.
  await using host = await startHostProcess({
    skills: [SKILLS],
    limits: { sse_idle_seconds: 2 },
  });
  const said = () => host.lines.slice(-40).join("\n");
  const wsUrl = `${host.url.replace("http", "ws")}/a2e`;
  const wait = (id: string) =>
    JSON.stringify({
      type: "tool/call/req",
      id,
      tool_name: "wait",
      arguments: { ms: 60_000 },
      streaming: true,
    });
  let vanished = 0;
  await t.step(
    "a WebSocket closed with calls in flight",
    () =>
      explained(said, async () => {
        for (let i = 0; i < 5; i++) {
          const wire = await wsWire(wsUrl);
          await wire.send(wait(`v${i}`));
          await wire.send(wait(`v${i}b`));
          await started(wire, [`v${i}`, `v${i}b`]);
          await wire.close();
          vanished += 2;
        }
      }),
  );
  await t.step(
    "an HTTP+SSE stream dropped with calls in flight",
    () =>
      explained(said, async () => {
        for (let i = 0; i < 3; i++) {
          const wire = await sseWire(`${host.url}/a2e`);
          await wire.send(wait(`s${i}`));
          await started(wire, [`s${i}`]);
          await wire.close();
          vanished++;
        }
      }),
  );
  await t.step(
    "an MCP client gone while its call streams",
    () =>
      explained(said, async () => {
        const url = `${host.url}/mcp`;
        for (let i = 0; i < 3; i++) {
          const session = await mcpOpen(url);
          const abort = new AbortController();
          const res = await fetch(url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-session-id": session,
              "mcp-protocol-version": "2025-06-18",
            },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 1,
              method: "tools/call",
              params: {
                name: "wait",
                arguments: { ms: 60_000 },
                _meta: { progressToken: "t" },
              },
            }),
            signal: abort.signal,
          });
          assert.equal(res.status, 200);
          // Its first progress notification: the call runs.
          const reader = res.body!.pipeThrough(new TextDecoderStream())
            .getReader();
          let text = "";
          while (!text.includes("notifications/progress")) {
            const { value, done } = await reader.read();
            assert.ok(!done, `The call ended: ${text}`);
            text += value;
          }
          abort.abort();
          await reader.cancel().catch(() => {});
          vanished++;
        }
      }),
  );
  await t.step(
    "messages after a shutdown get errors or nothing, and the socket closes",
    () =>
      explained(said, async () => {
        const wire = await wsWire(wsUrl);
        await wire.send(JSON.stringify({ type: "handshake/req", id: "h" }));
        await wire.send(wait("inflight"));
        await wire.send(
          JSON.stringify({ type: "shutdown", id: "x", timeout: 0.2 }),
        );
        for (const mutant of a2eMutants(SEED, { count: 30, prefix: "z" })) {
          await wire.send(mutant.raw);
        }
        await wire.closed;
        const after = wire.received.filter((m) =>
          typeof m.req_id === "string" && m.req_id.startsWith("z")
        );
        for (const msg of after) {
          // A draining session takes no call, list or configuration
          // (docs/a2e-wire.md, `shutdown`); a ping or a handshake is still
          // answered.
          assert.ok(
            ["error", "pong", "handshake/resp"].includes(String(msg.type)),
            JSON.stringify(msg),
          );
          assertA2eShape(msg, String(msg.req_id));
        }
        // The call still running when the drain ends is cut, as the client
        // asked; it is not lost: it ends in the history (next step).
        vanished++;
        assert.deepEqual(crashLines(host.lines), []);
      }),
  );
  await t.step(
    "every vanished call ends in the history, and the host serves on",
    () =>
      explained(said, async () => {
        const deadline = Date.now() + STUCK_MS;
        let runs: { outcome?: string; transport?: string; error?: string }[] =
          [];
        while (Date.now() < deadline) {
          const page = await (await fetch(
            `${host.url}/api/runs?name=wait&limit=100`,
          )).json();
          runs = page.runs;
          if (
            runs.length >= vanished &&
            runs.every((r) => r.outcome !== "running")
          ) break;
          // A cancelled call is written as it ends: look again.
          await new Promise((r) => setTimeout(r, 100));
        }
        const seen = JSON.stringify(
          runs.map((r) => [r.transport, r.outcome, r.error]),
        );
        assert.equal(runs.length, vanished, seen);
        for (const run of runs) {
          assert.ok(run.outcome !== "ok" && run.outcome !== "running", seen);
        }
        const fresh = await wsWire(wsUrl);
        await assertA2eServes(fresh);
        await fresh.close();
        await assertMcpServes(`${host.url}/mcp`);
        assert.deepEqual(crashLines(host.lines), []);
      }),
  );
});

Deno.test("fuzzed MCP lines on --mcp stdio are each answered and the session serves on", async () => {
  await onStdioHost("--mcp", async (wire) => {
    for (let b = 0; b < BATCHES; b++) {
      await driveMcpStdioBatch(wire, {
        seed: SEED * 1000 + 400 + b,
        count: COUNT,
      });
    }
  });
});

// Waits for a `tool/event` of each call: it runs in the sandbox.
async function started(wire: A2eWire, ids: string[]): Promise<void> {
  const deadline = Date.now() + STUCK_MS;
  while (
    !ids.every((id) =>
      wire.received.some((m) => m.req_id === id && m.type === "tool/event")
    )
  ) {
    assert.ok(Date.now() < deadline, `Calls ${ids} did not start`);
    await wire.arrival(STUCK_MS);
  }
}

async function writeConfig(work: string): Promise<string> {
  const config = `${work}/skillbox.jsonc`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      builtin_skills: false,
      skills: [SKILLS],
      store: { path: `${work}/runs.db` },
      sandbox: { cache_dir: `${work}/cache` },
    }),
  );
  return config;
}

Deno.test("fuzzed A2E messages on stdio get clear answers and the session serves on", async () => {
  await onStdioHost("--stdio", async (wire) => {
    for (let b = 0; b < BATCHES; b++) {
      await driveA2eBatch(wire, {
        seed: SEED * 1000 + 300 + b,
        count: COUNT,
        handshake: b === 0,
        prefix: `i${b}`,
      });
    }
    await assertA2eServes(wire);
  });
});

// Drives a host serving `mode` on its stdio from a fresh folder, then
// checks it exited 0 with no crash in its stderr.
async function onStdioHost(
  mode: "--stdio" | "--mcp",
  drive: (wire: ReturnType<typeof stdioWire>) => Promise<void>,
): Promise<void> {
  const work = await Deno.makeTempDir({ prefix: "skillbox-fuzz-" });
  try {
    const config = await writeConfig(work);
    const wire = stdioWire(
      new Deno.Command(Deno.execPath(), {
        args: ["run", ...HOST_FLAGS, HOST_MAIN, mode, "--config", config],
        cwd: work,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }),
    );
    await drive(wire);
    await wire.close();
    const stderr = await wire.stderr;
    assert.deepEqual(crashLines(stderr.split("\n")), [], stderr.slice(-3000));
    assert.equal((await wire.child.status).code, 0);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}

async function explained(said: () => string, run: () => Promise<void>) {
  try {
    await run();
  } catch (error) {
    throw new Error(`${(error as Error).message}\nhost stderr:\n${said()}`, {
      cause: error,
    });
  }
}
