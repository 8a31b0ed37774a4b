import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { MAX_BACKOFF_MS, ServerSlot } from "./server_slot.ts";

// Only its identity matters to the slot.
const clientA = {} as Client;
const clientB = {} as Client;

Deno.test("ServerSlot backs off failed starts, doubling from 250 ms up to 30 s, and a good start resets it", () => {
  const slot = new ServerSlot("s", { command: "x" });
  assert.equal(slot.reason, "not started");
  assert.ok(slot.waitMs(0) <= 0, "the first start is not delayed");
  const waits: number[] = [];
  for (let i = 0; i < 9; i++) {
    slot.failed("boom", 1_000);
    waits.push(slot.waitMs(1_000));
  }
  assert.deepEqual(waits, [
    250,
    500,
    1_000,
    2_000,
    4_000,
    8_000,
    16_000,
    MAX_BACKOFF_MS,
    MAX_BACKOFF_MS,
  ]);
  assert.equal(slot.client, null);
  slot.started(clientA);
  assert.equal(slot.reason, "");
  assert.equal(slot.client, clientA);
  slot.failed("again", 1_000);
  assert.equal(slot.waitMs(1_000), 250, "a good start forgets past failures");
});

Deno.test("ServerSlot.exited() frees the slot for an immediate restart, but ignores a client it no longer holds", () => {
  const slot = new ServerSlot("s", { url: "http://x" });
  slot.failed("boom", 0);
  slot.started(clientB);
  assert.equal(slot.exited(clientA, "old one"), false);
  assert.equal(slot.client, clientB);
  assert.equal(slot.reason, "");
  assert.equal(slot.exited(clientB, "the server exited"), true);
  assert.equal(slot.client, null);
  assert.equal(slot.reason, "the server exited");
  assert.ok(slot.waitMs(0) <= 0);
});

Deno.test("ServerSlot scrubs its entry's env and header values from every reason it keeps", () => {
  const stdio = new ServerSlot("s", {
    command: "x",
    env: { TOKEN: "env-secret-1" },
  });
  stdio.failed("exited (stderr: TOKEN=env-secret-1)", 0);
  assert.equal(stdio.reason, "exited (stderr: TOKEN=[redacted])");
  stdio.started(clientA);
  stdio.exited(clientA, "the server exited (stderr: env-secret-1)");
  assert.equal(stdio.reason, "the server exited (stderr: [redacted])");
  const url = new ServerSlot("u", {
    url: "https://x.test/mcp",
    headers: { authorization: "Bearer hdr-secret-2" },
  });
  url.failed("HTTP 401: bad token hdr-secret-2", 0);
  assert.equal(url.reason, "HTTP 401: bad token [redacted]");
});
