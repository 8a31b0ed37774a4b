/**
 * The bare floor of a tool call, with no skillbox code: one line over a pipe
 * to a child Deno process, a `postMessage` round trip to a worker inside it,
 * and the line back. A `tool/call` crosses at least this (plus the
 * WebSocket), so the tools bench compares against it.
 * Run alone with `deno run -A bench/floor_bench.ts`.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { type LatencyStats, latencyStats } from "./_stats.ts";

const CHILD = fileURLToPath(new URL("./_floor_child.ts", import.meta.url));

/** A started floor child: one round trip per {@link FloorProbe.once}. */
export interface FloorProbe {
  /** One line to the child, through its worker, and back. */
  once(): Promise<void>;
  /** Stops the child. */
  close(): Promise<void>;
}

/**
 * Starts the floor child.
 *
 * @param line the line sent each round trip (a tool call's size)
 * @returns the probe
 */
export function startFloor(
  line = '{"t":"op","id":"1","args":{"text":"hi"}}',
): FloorProbe {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-prompt", CHILD],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  // Read as the host reads its sandboxes (protocol/sandbox/pipe.ts): into
  // one reused buffer, not a fresh 64 KiB chunk per read.
  const reader = child.stdout.getReader({ mode: "byob" });
  let buffer = new Uint8Array(64 * 1024);
  const bytes = new TextEncoder().encode(line + "\n");
  return {
    async once() {
      await writer.write(bytes);
      let got = 0;
      while (got < bytes.length) {
        const { value, done } = await reader.read(buffer);
        if (done || value === undefined) throw new Error("Floor child exited");
        got += value.length;
        buffer = new Uint8Array(value.buffer);
      }
    },
    async close() {
      await writer.close().catch(() => {});
      reader.releaseLock();
      await child.stdout.cancel().catch(() => {});
      await child.status;
    },
  };
}

/**
 * Measures the bare floor: `rounds` round trips after a warm-up.
 *
 * @param rounds measured round trips
 * @returns latency figures in ms
 */
export async function measureFloor(rounds = 300): Promise<LatencyStats> {
  const probe = startFloor();
  try {
    for (let i = 0; i < 50; i++) await probe.once();
    const times: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const start = performance.now();
      await probe.once();
      times.push(performance.now() - start);
    }
    return latencyStats(times);
  } finally {
    await probe.close();
  }
}

if (import.meta.main) {
  const s = await measureFloor();
  const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
  // A bench prints its figures when run alone.
  // deno-lint-ignore no-console
  console.log(
    `bare floor (pipe + worker round trip): min ${us(s.min)}, median ${
      us(s.median)
    }, max ${us(s.max)}`,
  );
}
