/**
 * A flood of TCP connections against a host process: whoever can reach the
 * port (any local process on a loopback host) opens connections and sends
 * nothing, until the host has no file descriptor left.
 *
 * Deno.serve's accept loop ends at its first failed accept (EMFILE) and
 * closes the listener; the host used to die of that rejection, and every
 * session with it. The host is run with a small descriptor limit here
 * (`prlimit`) so that a few hundred connections reach it.
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
// Far above what the host holds open at rest (about 60 descriptors), far
// below what the test process may open.
const MAX_OPEN_FILES = 256;
const FLOOD = 2 * MAX_OPEN_FILES;

async function echo(
  wire: Awaited<ReturnType<typeof wsWire>>,
  id: string,
): Promise<Msg> {
  wire.send(JSON.stringify({
    type: "tool/call/req",
    id,
    tool_name: "echo",
    arguments: { text: id },
  }));
  return await answerTo(wire, id);
}

// Opens connections until the host refuses one or `count` are open. A
// connection still in the listen backlog when the host closes its
// listener is reset instead of refused: the same answer, "not now".
async function flood(port: number, count: number): Promise<Deno.Conn[]> {
  const conns: Deno.Conn[] = [];
  for (let i = 0; i < count; i++) {
    try {
      conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    } catch (error) {
      if (
        error instanceof Deno.errors.ConnectionRefused ||
        error instanceof Deno.errors.ConnectionReset
      ) break;
      throw error;
    }
  }
  return conns;
}

// `/health` once connections are taken again (the flood is gone): polled,
// as a client would retry, for at most `ms`.
async function healthWithin(url: string, ms: number): Promise<number> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const res = await fetch(`${url}/health`);
      await res.body?.cancel();
      return res.status;
    } catch (error) {
      if (Date.now() > end) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

Deno.test("a flood of connections past the descriptor limit leaves the host serving", async () => {
  await using host = await startHostProcess({ skills: [SKILLS] }, {
    maxOpenFiles: MAX_OPEN_FILES,
  });
  const port = Number(new URL(host.url).port);
  const wire = await wsWire(`${host.url.replace("http", "ws")}/a2e`);
  let conns: Deno.Conn[] = [];
  try {
    const before = await echo(wire, "before");
    assert.equal((before.data as Msg)?.success, true, JSON.stringify(before));

    conns = await flood(port, FLOOD);
    // The host ran out of descriptors: it took fewer than the flood.
    assert.ok(conns.length < FLOOD, `${conns.length} connections taken`);
    await host.waitForLine(/stopped accepting connections/, 30_000);

    // A session opened before the flood goes on being served.
    const during = await echo(wire, "during");
    assert.equal((during.data as Msg)?.success, true, JSON.stringify(during));

    for (const conn of conns) conn.close();
    conns = [];
    // The host takes connections again once the flood has gone.
    assert.equal(await healthWithin(host.url, 30_000), 200);
    const fresh = await wsWire(`${host.url.replace("http", "ws")}/a2e`);
    try {
      const after = await echo(fresh, "after");
      assert.equal((after.data as Msg)?.success, true, JSON.stringify(after));
    } finally {
      await fresh.close();
    }
    // And says so, once it has been accepting for a while.
    await host.waitForLine(/accepts connections again/, 30_000);
  } finally {
    for (const conn of conns) conn.close();
    await wire.close();
  }
  assert.deepEqual(crashLines(host.lines), []);
});
