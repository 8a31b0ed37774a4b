/**
 * Ping over the host's WebSocket against a raw Hono WebSocket echo server
 * started in the same process: round trip min/median/max, their ratio (goal
 * ≤ 1.3), and pings per second with 32 in flight.
 *
 * @module
 */

import { Hono } from "hono";
import { upgradeWebSocket } from "hono/deno";
import { createHost } from "../runtime/host.ts";
import type { Bench } from "./main.ts";

const WARMUP = 500;
const ROUNDS = 3;
const PER_ROUND = 2000;
const IN_FLIGHT = 32;
const THROUGHPUT_TOTAL = 40_000;

interface Client {
  roundTrip(text: string): Promise<void>;
  socket: WebSocket;
}

async function connect(url: string): Promise<Client> {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let waiting: (() => void) | null = null;
  socket.onmessage = () => {
    const done = waiting;
    waiting = null;
    done?.();
  };
  return {
    socket,
    roundTrip(text) {
      return new Promise((resolve) => {
        waiting = resolve;
        socket.send(text);
      });
    },
  };
}

async function sample(client: Client, count: number): Promise<number[]> {
  const ping = JSON.stringify({ type: "ping", id: "b", version: "1.0" });
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await client.roundTrip(ping);
    times.push(performance.now() - start);
  }
  return times;
}

async function throughput(url: string): Promise<number> {
  const socket = new WebSocket(url);
  await new Promise((resolve) => socket.onopen = resolve);
  const ping = JSON.stringify({ type: "ping", id: "t", version: "1.0" });
  let sent = 0;
  let received = 0;
  const done = Promise.withResolvers<void>();
  socket.onmessage = () => {
    received++;
    if (received === THROUGHPUT_TOTAL) done.resolve();
    else if (sent < THROUGHPUT_TOTAL) {
      sent++;
      socket.send(ping);
    }
  };
  const start = performance.now();
  for (; sent < IN_FLIGHT; sent++) socket.send(ping);
  await done.promise;
  const seconds = (performance.now() - start) / 1000;
  socket.close();
  return THROUGHPUT_TOTAL / seconds;
}

function stats(times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  return { min: sorted[0] ?? NaN, median, max: sorted.at(-1) ?? NaN };
}

const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;

/** The ping bench, for `bench/main.ts`. */
export const pingBench: Bench = {
  name: "ping over WebSocket",
  async run() {
    const host = createHost({ capabilities: [] });
    const hostAddr = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const echo = new Hono().get(
      "/",
      upgradeWebSocket(() => ({
        onMessage: (event, ws) => ws.send(event.data as string),
      })),
    );
    const echoServer = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      echo.fetch,
    );
    const hostUrl = hostAddr.url.replace("http", "ws") + "/a2e";
    const echoUrl = `ws://127.0.0.1:${echoServer.addr.port}/`;
    try {
      const hostClient = await connect(hostUrl);
      const echoClient = await connect(echoUrl);
      await sample(hostClient, WARMUP);
      await sample(echoClient, WARMUP);
      // Alternate rounds so drift (GC, CPU frequency) hits both alike.
      const hostTimes: number[] = [];
      const echoTimes: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        hostTimes.push(...await sample(hostClient, PER_ROUND));
        echoTimes.push(...await sample(echoClient, PER_ROUND));
      }
      hostClient.socket.close();
      echoClient.socket.close();
      const h = stats(hostTimes);
      const e = stats(echoTimes);
      const perSecond = await throughput(hostUrl);
      const ratio = h.median / e.median;
      return [
        `host ping round trip: min ${us(h.min)}, median ${us(h.median)}, max ${
          us(h.max)
        } (n=${hostTimes.length})`,
        `raw Hono echo round trip: min ${us(e.min)}, median ${
          us(e.median)
        }, max ${us(e.max)} (n=${echoTimes.length})`,
        `ratio host/echo (median): ${ratio.toFixed(2)} (goal <= 1.3) ${
          ratio <= 1.3 ? "OK" : "OVER GOAL"
        }`,
        `host pings/second with ${IN_FLIGHT} in flight: ${
          Math.round(perSecond)
        }`,
      ];
    } finally {
      await host.close({ timeoutSeconds: 0 });
      await echoServer.shutdown();
    }
  },
};
