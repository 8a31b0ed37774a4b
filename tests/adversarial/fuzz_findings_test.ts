/**
 * Defects the seeded fuzz campaign (`fuzz_test.ts`) found, each held by a
 * plain test of the one message that showed it, against a host in its own
 * process (so a crash shows as the process dying, an uncaught error as a
 * line on its stderr).
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

Deno.test("a skill call with a timeout under a millisecond is answered and the host lives on", async () => {
  await using host = await startHostProcess({ skills: [SKILLS] });
  const wire = await wsWire(`${host.url.replace("http", "ws")}/a2e`);
  try {
    // The deadline passes while the run starts (reading the skill's
    // scripts): a race, so several calls make it likely.
    for (let i = 0; i < 10; i++) {
      wire.send(JSON.stringify({
        type: "skill/call/req",
        id: `tiny${i}`,
        name: "notes",
        arguments: {},
        timeout: 0.0001,
      }));
    }
    for (let i = 0; i < 10; i++) {
      const answer = await answerTo(wire, `tiny${i}`);
      assert.equal(answer.type, "skill/call/resp", JSON.stringify(answer));
      const data = answer.data as Msg;
      assert.equal(data.success, false);
      // Timed out, or failed first for want of an LLM.
      assert.match(String(data.error_code), /^(timeout|skill_error)$/);
    }
    wire.send(JSON.stringify({ type: "ping", id: "after" }));
    assert.equal((await answerTo(wire, "after")).type, "pong");
  } finally {
    await wire.close();
  }
  assert.deepEqual(crashLines(host.lines), []);
});

Deno.test("an MCP initialize with wrong params is refused naming the field, with its id", async () => {
  await using host = await startHostProcess({ skills: [SKILLS] });
  for (
    const [params, field] of [
      [{}, "params.protocolVersion"],
      [{
        protocolVersion: 5,
        capabilities: {},
        clientInfo: { name: "c", version: "1" },
      }, "params.protocolVersion"],
      [{
        protocolVersion: "2025-06-18",
        capabilities: "all",
        clientInfo: { name: "c", version: "1" },
      }, "params.capabilities"],
    ] as const
  ) {
    const res = await fetch(`${host.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "initialize",
        params,
      }),
    });
    // It was answered "Bad Request: Server not initialized", id null: the
    // SDK took it for no initialize at all.
    assert.equal(res.status, 400);
    const answer = await res.json();
    assert.equal(answer.id, 7, JSON.stringify(answer));
    assert.equal(answer.error.code, -32602, JSON.stringify(answer));
    assert.match(
      answer.error.message,
      new RegExp(`^Invalid initialize request: ${field}: `),
    );
    assert.equal(res.headers.get("mcp-session-id"), null);
  }
  assert.deepEqual(crashLines(host.lines), []);
});
