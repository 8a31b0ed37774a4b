/**
 * What all sessions together have the host hold is bounded. Each session
 * may have 64 MiB of calls waiting for its slots (`queued_calls_test.ts`),
 * but nothing bounded the sum: one client opening sessions and filling
 * each (any local process, on a loopback host without tokens) grew the
 * host's heap until V8 ended the process ("Fatal JavaScript out of
 * memory"), every session with it. Against a host process with a small
 * heap, so that a few sessions reach it.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  answerTo,
  crashLines,
  type Msg,
  wsWire,
} from "../support/fuzz_drive.ts";
import { startHostProcess } from "./_host_process.ts";

const SKILLS = fileURLToPath(new URL("../fixtures/fuzz/", import.meta.url));
const HEAP_MB = 256;
// Each session: its slots taken by calls that wait, then 64 MiB of large
// calls waiting for them. Together twice the host's heap.
const SESSIONS = 8;
const BIG_CALLS = 16;
const PAD = "x".repeat(4_000_000);

type Wire = Awaited<ReturnType<typeof wsWire>>;

Deno.test("sessions that together send more than the host can hold get refusals; the host and other sessions go on", async () => {
  await using host = await startHostProcess({ skills: [SKILLS] }, {
    heapMb: HEAP_MB,
  });
  const url = `${host.url.replace("http", "ws")}/a2e`;
  const flood: Wire[] = [];
  try {
    for (let s = 0; s < SESSIONS; s++) {
      const wire = await wsWire(url);
      flood.push(wire);
      for (let i = 0; i < 5; i++) {
        wire.send(JSON.stringify({
          type: "tool/call/req",
          id: `wait${i}`,
          tool_name: "wait",
          arguments: { ms: 120_000 },
        }));
      }
      for (let i = 0; i < BIG_CALLS; i++) {
        wire.send(JSON.stringify({
          type: "tool/call/req",
          id: `big${i}`,
          tool_name: "echo",
          arguments: { text: "big", pad: PAD },
        }));
      }
      // Each message was taken (held or refused) once a ping is answered.
      wire.send(JSON.stringify({ type: "ping", id: "sent" }));
      await answerTo(wire, "sent", 60_000).catch((error) => {
        throw new Error(
          `${error.message}; the host's stderr ends:\n${
            host.lines.slice(-5).join("\n")
          }`,
        );
      });
    }
    // The host lives, and a session with a small call is served.
    const other = await wsWire(url);
    try {
      other.send(JSON.stringify({
        type: "tool/call/req",
        id: "small",
        tool_name: "echo",
        arguments: { text: "small" },
      }));
      const small = await answerTo(other, "small");
      assert.equal((small.data as Msg)?.success, true, JSON.stringify(small));
    } finally {
      await other.close();
    }
    // Some large calls were refused, saying why, retryable.
    const refused = flood.flatMap((w) => w.received).filter((m) =>
      m.type === "error" && String(m.req_id).startsWith("big")
    );
    assert.ok(refused.length > 0, "No large call was refused");
    assert.match(String(refused[0]!.message), /the host holds/);
    assert.equal(refused[0]!.retryable, true, JSON.stringify(refused[0]));
  } finally {
    for (const wire of flood) await wire.close();
  }
  assert.deepEqual(crashLines(host.lines), []);
});
