/**
 * What all HTTP+SSE sessions together have the host keep for their
 * clients is bounded, not only what each keeps: its replay buffer (8 Mi
 * characters of messages already sent, for a `Last-Event-ID` reconnect)
 * and its queue (messages its client has not pulled yet, 64 MiB before
 * the session is ended). One client opening sessions and making calls with
 * large answers (any local process, on a loopback host without tokens)
 * filled the host's heap until V8 ended the process ("Fatal JavaScript out
 * of memory"), every session with it. Against a host process with a small
 * heap, so that a few dozen sessions reach it.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { crashLines, type Msg, sseWire } from "../support/fuzz_drive.ts";
import { startHostProcess } from "./_host_process.ts";

const SKILLS = fileURLToPath(new URL("../fixtures/fuzz/", import.meta.url));
const HEAP_MB = 256;
// Each session: calls whose answers fill its replay buffer (or its queue).
// Together far more than the host's heap.
const SESSIONS = 40;
const CALLS = 10;
const TEXT = "z".repeat(1_000_000);

function call(id: string, text = TEXT): string {
  return JSON.stringify({
    type: "tool/call/req",
    id,
    tool_name: "echo",
    arguments: { text },
  });
}

async function answered(
  wire: Awaited<ReturnType<typeof sseWire>>,
  count: number,
): Promise<Msg[]> {
  const answers = () =>
    wire.received.filter((m) =>
      m.type === "tool/call/resp" || m.type === "error"
    );
  const end = Date.now() + 60_000;
  while (answers().length < count) {
    assert.ok(Date.now() < end, `${answers().length} of ${count} answers`);
    await wire.arrival(1_000);
  }
  return answers();
}

async function smallCallServed(base: string): Promise<void> {
  const other = await sseWire(base);
  try {
    await other.send(call("small", "small"));
    const [answer] = await answered(other, 1);
    assert.equal((answer!.data as Msg)?.success, true, JSON.stringify(answer));
  } finally {
    await other.close();
  }
}

Deno.test("sessions whose replay buffers together pass the host's bound keep less; the host lives", async () => {
  await using host = await startHostProcess({ skills: [SKILLS] }, {
    heapMb: HEAP_MB,
  });
  const base = `${host.url}/a2e`;
  const wires: Awaited<ReturnType<typeof sseWire>>[] = [];
  try {
    for (let s = 0; s < SESSIONS; s++) {
      const wire = await sseWire(base);
      wires.push(wire);
      for (let i = 0; i < CALLS; i++) await wire.send(call(`c${i}`));
      // Read to the end: each answer is now kept for a replay.
      const answers = await answered(wire, CALLS);
      for (const answer of answers) {
        assert.equal(answer.type, "tool/call/resp", JSON.stringify(answer));
      }
    }
    await smallCallServed(base);
  } finally {
    for (const wire of wires) await wire.close();
  }
  assert.deepEqual(crashLines(host.lines), []);
});

Deno.test("sessions whose unread answers together pass the host's bound are ended, over their share; the host lives", async () => {
  await using host = await startHostProcess({ skills: [SKILLS] }, {
    heapMb: HEAP_MB,
  });
  const base = `${host.url}/a2e`;
  const ids: string[] = [];
  for (let s = 0; s < SESSIONS; s++) {
    // A session whose client never opens its stream: every answer waits.
    const res = await fetch(`${base}/session`, { method: "POST" });
    assert.equal(res.status, 200);
    const { session_id: id } = await res.json();
    ids.push(id);
    for (let i = 0; i < CALLS; i++) {
      const sent = await fetch(`${base}/send`, {
        method: "POST",
        headers: { "x-session-id": id, "content-type": "text/plain" },
        body: call(`c${i}`),
      });
      await sent.body?.cancel();
      // 404 once the host ended the session.
      assert.ok(sent.status === 200 || sent.status === 404, `${sent.status}`);
    }
  }
  await smallCallServed(base);
  await host.waitForLine(/Ending an SSE session/, 30_000);
  assert.deepEqual(crashLines(host.lines), []);
});
