/**
 * The bare floor of a tool call, with no skillbox code: one line over a pipe
 * to a child Deno process, a `postMessage` round trip to a worker inside it,
 * and the line back. A `tool/call` crosses at least this (plus the
 * WebSocket), so the tools bench compares against it.
 * Run alone with `deno run -A bench/floor_bench.ts`.
 *
 * @module
 */

// A bench prints its figures when run alone.
// deno-lint-ignore-file no-console

import { fileURLToPath } from "node:url";
import { type LatencyStats, latencyStats } from "./_stats.ts";

const CHILD = fileURLToPath(new URL("./_floor_child.ts", import.meta.url));

/**
 * Measures the bare floor: `rounds` pipe + worker round trips after a warm-up.
 *
 * @param rounds measured round trips
 * @param line the line sent (a tool call's size)
 * @returns latency figures in ms
 */
export async function measureFloor(
  rounds = 300,
  line = '{"t":"op","id":"1","args":{"text":"hi"}}',
): Promise<LatencyStats> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-prompt", CHILD],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.getReader();
  const encoder = new TextEncoder();
  const bytes = encoder.encode(line + "\n");
  const once = async () => {
    await writer.write(bytes);
    let got = 0;
    while (got < bytes.length) {
      const { value, done } = await reader.read();
      if (done) throw new Error("Floor child exited");
      got += value.length;
    }
  };
  try {
    for (let i = 0; i < 50; i++) await once();
    const times: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const start = performance.now();
      await once();
      times.push(performance.now() - start);
    }
    return latencyStats(times);
  } finally {
    await writer.close().catch(() => {});
    reader.releaseLock();
    await child.stdout.cancel().catch(() => {});
    await child.status;
  }
}

if (import.meta.main) {
  const s = await measureFloor();
  const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
  console.log(
    `bare floor (pipe + worker round trip): min ${us(s.min)}, median ${
      us(s.median)
    }, max ${us(s.max)}`,
  );
}
