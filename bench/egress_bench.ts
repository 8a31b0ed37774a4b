/**
 * What the egress proxy costs a sandbox's own `fetch`: a module with a
 * `net` grant fetches a small answer from a loopback server, timed inside
 * the sandbox (one call, many fetches), confined (through relay and proxy,
 * the name resolved and checked by the host) against unconfined (direct,
 * Deno's connection pool), in one run.
 *
 * @module
 */

import { join } from "node:path";
import { createSandbox } from "../runtime/sandbox/sandbox.ts";
import { EgressBroker } from "../runtime/egress/broker.ts";
import type { ConfinementMode } from "../runtime/confine/confine.ts";
import type { Bench } from "./main.ts";
import { type LatencyStats, latencyStats } from "./_stats.ts";

const FETCHES = 200;
const WARMUP = 20;

const MODULE = `export default {
  kind: "tool", name: "fetcher", description: "Fetches a URL many times",
  input: { type: "object" },
  async run(a: { url: string; n: number }) {
    const times: number[] = [];
    for (let i = 0; i < a.n; i++) {
      const t = performance.now();
      const r = await fetch(a.url);
      await r.arrayBuffer();
      times.push(performance.now() - t);
    }
    return times;
  },
};`;

async function measure(
  mode: ConfinementMode,
  dir: string,
  port: number,
): Promise<number[]> {
  const sandbox = createSandbox({
    cacheDir: null,
    memoryMb: 256,
    confinement: mode,
    egress: new EgressBroker({
      privateHosts: ["a.test"],
      resolve: () => Promise.resolve(["127.0.0.1"]),
    }),
  });
  try {
    // Confined, the name is the host's to resolve; unconfined, Deno's.
    const host = mode === "off" ? "127.0.0.1" : "a.test";
    const outcome = await sandbox.call({
      path: join(dir, "mod.ts"),
      export: "default",
      version: "v1",
      args: { url: `http://${host}:${port}/`, n: FETCHES + WARMUP },
      grant: { net: [host], read: [dir] },
      timeoutMs: 120_000,
      sessionId: "bench",
      callId: "c",
      config: {},
      metadata: {},
      isolation: "warm",
    }, {
      onEvent() {},
      callTool: () => Promise.reject(new Error("unused")),
      chat: () => Promise.reject(new Error("unused")),
    });
    if (!outcome.ok) throw new Error(`Bench call failed: ${outcome.message}`);
    return (outcome.value as number[]).slice(WARMUP);
  } finally {
    await sandbox.close();
  }
}

function format(s: LatencyStats): string {
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  return `median ${ms(s.median)}, min ${ms(s.min)}, max ${ms(s.max)}, ` +
    `p99 ${ms(s.p99)} (${s.count} fetches)`;
}

/** The egress proxy bench. */
export const egressBench: Bench = {
  name: "egress proxy: a sandbox's fetch, confined (proxy) vs off (direct)",
  async run() {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response("ok"),
    );
    const dir = await Deno.makeTempDir({ prefix: "egress_bench_" });
    await Deno.writeTextFile(join(dir, "mod.ts"), MODULE);
    try {
      const proxied = latencyStats(
        await measure("required", dir, server.addr.port),
      );
      const direct = latencyStats(await measure("off", dir, server.addr.port));
      return [
        `through the proxy: ${format(proxied)}`,
        `direct (off):      ${format(direct)}`,
        `median ratio ${(proxied.median / direct.median).toFixed(1)}x, ` +
        `+${(proxied.median - direct.median).toFixed(2)} ms a fetch`,
      ];
    } finally {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
};
