import assert from "node:assert/strict";
import { createInProcessTransport } from "./in_process.ts";
import type { Session } from "../session.ts";
import {
  encodeError,
  encodeEvent,
  encodeResponse,
} from "../../protocol/responses.ts";
import { skillOutcome } from "../../protocol/skill.ts";
import { type CallEvent, toolOutcome } from "../../protocol/tool.ts";

type Answer = (
  session: Session,
  value: Record<string, unknown>,
  signal: AbortSignal | undefined,
) => void;

// A stand-in dispatcher that answers each request as `answer` says.
function transport(answer: Answer, closing = false) {
  const seen: Record<string, unknown>[] = [];
  const local = createInProcessTransport({
    closing: () => closing,
    dispatcher: {
      receiveValue(session, value, options) {
        seen.push(value as Record<string, unknown>);
        answer(session, value as Record<string, unknown>, options?.signal);
        return Promise.resolve();
      },
    },
  });
  return { local, seen };
}

Deno.test("request() envelopes the message and resolves with its answer, relaying events", async () => {
  const events: CallEvent[] = [];
  const { local, seen } = transport((session, value) => {
    const id = String(value.id);
    session.send(encodeEvent("tool/event", "someone-else", {
      kind: "x",
      data: {},
      seq: 9,
    }));
    session.send(
      encodeEvent("tool/event", id, { kind: "log", data: {}, seq: 0 }),
    );
    session.send(encodeResponse("ping", id, { uptimeSeconds: 1 }));
  });
  const answer = await local.request({ type: "ping" }, {
    onEvent: (event) => events.push(event),
  });
  assert.equal(answer.type, "pong");
  assert.equal(answer.req_id, seen[0]?.id);
  assert.equal(seen[0]?.version, "1.0");
  assert.equal(typeof seen[0]?.ts, "number");
  assert.deepEqual(events.map((e) => e.seq), [0]);
  assert.equal(local.session.token, "");
});

Deno.test("request() refuses a handshake, a shutdown, and any call once the host closes", async () => {
  const { local } = transport(() => {});
  await assert.rejects(local.request({ type: "handshake/req" }), TypeError);
  await assert.rejects(local.request({ type: "shutdown" }), TypeError);
  const closed = transport(() => {}, true).local;
  await assert.rejects(closed.request({ type: "ping" }), {
    code: "runtime_error",
  });
});

Deno.test("callTool() streams only with a listener, decodes the result and throws an error answer", async () => {
  const { local, seen } = transport((session, value) => {
    const id = String(value.id);
    if (value.tool_name === "nope") {
      session.send(encodeError(id, { code: "unknown_tool", message: "No" }));
      return;
    }
    session.send(encodeResponse("tool/call/req", id, {
      result: toolOutcome({
        success: true,
        toolName: String(value.tool_name),
        data: value.arguments,
        durationMs: 1,
      }),
    }));
  });
  const result = await local.callTool("echo", { a: 1 }, { timeout: 5 });
  assert.deepEqual(result.data, { a: 1 });
  assert.equal(seen[0]?.streaming, false);
  assert.equal(seen[0]?.timeout, 5);
  await local.callTool("echo", {}, { onEvent() {} });
  assert.equal(seen[1]?.streaming, true);
  assert.equal("timeout" in seen[1]!, false);
  await assert.rejects(local.callTool("nope", {}), { code: "unknown_tool" });
});

Deno.test("callSkill() returns the result, or throws the skill's error when there is none", async () => {
  const { local } = transport((session, value) => {
    const id = String(value.id);
    const ok = value.name === "fine";
    session.send(encodeResponse("skill/call/req", id, {
      name: String(value.name),
      result: ok ? skillOutcome({ success: true, durationMs: 1 }) : null,
      error: ok ? null : {
        code: "unknown_skill",
        message: "No such skill",
        retryable: false,
      },
    }));
  });
  assert.equal((await local.callSkill("fine", {})).success, true);
  await assert.rejects(local.callSkill("gone", {}), {
    code: "unknown_skill",
    message: "No such skill",
  });
});
