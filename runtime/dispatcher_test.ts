import assert from "node:assert/strict";
import type { Capability, OutgoingMessage } from "./capability.ts";
import { Dispatcher } from "./dispatcher.ts";
import { SkillboxError } from "../protocol/errors.ts";
import { envelope } from "../protocol/envelope.ts";
import { toolOutcome } from "../protocol/tool.ts";
import { Session } from "./session.ts";
import { Semaphore } from "./slots.ts";
import { Admission } from "./admission.ts";
import { defaultConfig } from "./config.ts";
import { settlesWithin } from "./deadline.ts";

function record() {
  const sent: OutgoingMessage[] = [];
  return { sent, session: new Session({ send: (m) => sent.push(m) }) };
}

const failing: Capability = {
  name: "tools",
  handlers: {
    "tool/call/req": () =>
      Promise.reject(new SkillboxError("unknown_tool", 'Unknown tool "x"')),
    "tool/list/req": () =>
      // A handler that forgets req_id still gets it echoed.
      Promise.resolve(envelope("tool/list/resp", { tools: [], req_id: "" })),
  },
};

Deno.test("Dispatcher maps a handler's SkillboxError to an error naming the capability", async () => {
  const { sent, session } = record();
  const dispatcher = new Dispatcher({ capabilities: [failing] });
  await dispatcher.receive(
    session,
    '{"type":"tool/call/req","id":"c","arguments":{}}',
  );
  assert.equal(sent[0]?.type, "error");
  assert.equal(sent[0]?.code, "unknown_tool");
  assert.equal(sent[0]?.req_id, "c");
  assert.equal(sent[0]?.capability_name, "tools");
});

Deno.test("Dispatcher echoes req_id even when a handler omits it", async () => {
  const { sent, session } = record();
  const dispatcher = new Dispatcher({ capabilities: [failing] });
  await dispatcher.receive(session, '{"type":"tool/list/req","id":"l"}');
  assert.equal(sent[0]?.req_id, "l");
});

Deno.test("Dispatcher reaches a handler its capability put in place after it was added", async () => {
  const { sent, session } = record();
  const handlers: Capability["handlers"] = {
    "tool/list/req": () =>
      Promise.reject(new SkillboxError("runtime_error", "Not loaded yet")),
  };
  const dispatcher = new Dispatcher({
    capabilities: [{ name: "tools", handlers }],
  });
  await dispatcher.receive(session, '{"type":"tool/list/req","id":"a"}');
  // As a capability offered before it is loaded does once it is.
  (handlers as Record<string, unknown>)["tool/list/req"] = () =>
    Promise.resolve(envelope("tool/list/resp", { tools: [], req_id: "" }));
  await dispatcher.receive(session, '{"type":"tool/list/req","id":"b"}');
  assert.deepEqual(sent.map((m) => [m.req_id, m.type]), [
    ["a", "error"],
    ["b", "tool/list/resp"],
  ]);
});

Deno.test("Dispatcher refuses capabilities outside the A2E list", () => {
  assert.throws(
    () =>
      new Dispatcher().addCapability({
        name: "streaming" as "tools",
        handlers: {},
      }),
    /not an A2E capability name/,
  );
});

Deno.test("Dispatcher rejects a message over max_message_bytes with its id", async () => {
  const { sent, session } = record();
  const dispatcher = new Dispatcher({ maxMessageBytes: 1024 });
  await dispatcher.receive(
    session,
    `{"type":"ping","id":"big","pad":"${"é".repeat(600)}"}`,
  );
  assert.equal(sent[0]?.code, "invalid_message");
  assert.equal(sent[0]?.req_id, "big");
  assert.match(String(sent[0]?.message), /exceeds the limit of 1024 bytes/);
});

Deno.test("Dispatcher pong carries a float uptime", async () => {
  const { sent, session } = record();
  await new Dispatcher().receive(session, '{"type":"ping","id":"p"}');
  assert.equal(typeof sent[0]?.uptime_seconds, "number");
  assert.ok(!Number.isInteger(sent[0]?.uptime_seconds));
});

// A capability whose list request hands its signal out and waits until
// told to answer, or until its signal aborts.
function holding() {
  const signals: AbortSignal[] = [];
  let answer = Promise.withResolvers<void>();
  const capability: Capability = {
    name: "tools",
    handlers: {
      "tool/list/req": ({ signal }) => {
        signals.push(signal);
        return new Promise((resolve, reject) => {
          signal.addEventListener("abort", () => reject(signal.reason));
          answer.promise.then(() =>
            resolve(envelope("tool/list/resp", { tools: [], req_id: "" }))
          );
        });
      },
    },
  };
  return {
    signals,
    capability,
    answer() {
      answer.resolve();
      answer = Promise.withResolvers<void>();
    },
  };
}

Deno.test("Dispatcher cancels a call by its own signal, and by its session's end", async (t) => {
  const list = '{"type":"tool/list/req","id":"l"}';
  await t.step("its own signal", async () => {
    const { sent, session } = record();
    const held = holding();
    const own = new AbortController();
    const done = new Dispatcher({ capabilities: [held.capability] })
      .receive(session, list, { signal: own.signal });
    own.abort(new Error("client cancelled"));
    await done;
    assert.equal(sent[0]?.code, "runtime_error");
    assert.match(String(sent[0]?.message), /client cancelled/);
    assert.equal(session.signal.aborted, false);
  });
  await t.step("the session's end", async () => {
    const { session } = record();
    const held = holding();
    const done = new Dispatcher({ capabilities: [held.capability] })
      .receive(session, list, { signal: new AbortController().signal });
    session.close("client left");
    await done;
    assert.match(String(held.signals[0]?.reason?.message), /client left/);
  });
});

Deno.test("Dispatcher lets go of a call's own signal once the call is over", async () => {
  // A signal the session still held would abort with it (and, in Deno, be
  // kept alive by it: one leaked signal per call).
  const { sent, session } = record();
  const held = holding();
  const own = new AbortController();
  const dispatcher = new Dispatcher({ capabilities: [held.capability] });
  const done = dispatcher.receive(
    session,
    '{"type":"tool/list/req","id":"a"}',
    {
      signal: own.signal,
    },
  );
  held.answer();
  await done;
  assert.equal(sent[0]?.type, "tool/list/resp");
  session.close("client left");
  own.abort();
  assert.equal(held.signals[0]?.aborted, false);
});

Deno.test("admitInner runs an inner call in its caller's lent slot when the session's are taken", async () => {
  const session = new Session({ send() {}, maxParallel: 1 });
  const dispatcher = new Dispatcher();
  // The outer call holds the session's only slot.
  const outer = session.limiter.tryAcquire()!;
  const lent = new Semaphore(1);
  const first = await dispatcher.admitInner(session, {
    lent,
    signal: session.signal,
  });
  assert.equal(lent.active, 1);
  // A second inner call waits for the lent slot, not the session's.
  let second: (() => void) | null = null;
  const waiting = dispatcher.admitInner(session, {
    lent,
    signal: session.signal,
  })
    .then((release) => (second = release));
  await Promise.resolve();
  assert.equal(second, null);
  first();
  await waiting;
  assert.notEqual(second, null);
  second!();
  outer();
  assert.equal(session.limiter.active, 0);
  assert.equal(lent.active, 0);
});

Deno.test("admitInner counts against the token's calls_per_minute", async () => {
  const session = new Session({ send() {}, maxParallel: 2 });
  const dispatcher = new Dispatcher({
    quotas: new Map([["", { callsPerMinute: 1 }]]),
  });
  const slot = { lent: new Semaphore(1), signal: session.signal };
  (await dispatcher.admitInner(session, slot))();
  await assert.rejects(
    dispatcher.admitInner(session, slot),
    /quota of 1 calls per minute/,
  );
});

Deno.test("Dispatcher refuses a handshake that presents another token on an accepted session, and changes nothing", async (t) => {
  const admission = new Admission({
    config: { ...defaultConfig(), tokens: ["t1", "t2"] },
  });
  const dispatcher = new Dispatcher({
    tokens: ["t1", "t2"],
    accept: (session, token) =>
      (["t1", "t2"].includes(token) ? "" : "Invalid auth token") ||
      admission.admit(session, token),
  });
  const handshake = (id: string, token: string | null) =>
    JSON.stringify({ type: "handshake/req", id, auth_token: token });
  const sent: OutgoingMessage[] = [];
  const session = admission.open({
    transport: "websocket",
    send: (m) => sent.push(m),
  }) as Session;
  await dispatcher.receive(session, handshake("h1", "t1"));
  assert.equal(sent.at(-1)?.ok, true);
  const switches: [string, string][] = [
    ["a valid one", "t2"],
    ["an invalid one", "x"],
  ];
  for (const [step, token] of switches) {
    await t.step(step, async () => {
      await dispatcher.receive(session, handshake(step, token));
      const answer = sent.at(-1)!;
      assert.equal(answer.ok, false);
      assert.deepEqual(answer.accepted_caps, []);
      assert.match(
        String(answer.reason),
        /^Cannot change the session's token: .*open a new session/,
      );
      assert.deepEqual([session.auth, session.token], ["accepted", "t1"]);
      assert.equal(admission.admitted, 1);
    });
  }
  await t.step("its own token, or none, is accepted again", async () => {
    for (const token of ["t1", "", null]) {
      await dispatcher.receive(session, handshake("again", token));
      assert.equal(sent.at(-1)?.ok, true, String(token));
      assert.equal(session.token, "t1");
    }
  });
  // A second session of t2 is counted under t2; the first never was.
  const other: OutgoingMessage[] = [];
  const second = admission.open({
    transport: "websocket",
    send: (m) => other.push(m),
  }) as Session;
  await dispatcher.receive(second, handshake("h2", "t2"));
  assert.equal(other.at(-1)?.ok, true);
  assert.equal(admission.admitted, 2);
  session.close();
  second.close();
});

Deno.test("Dispatcher drains a session once however many shutdowns it is sent: each would hold a waiter and a timer", async () => {
  const { session } = record();
  const held = holding();
  const dispatcher = new Dispatcher({ capabilities: [held.capability] });
  const call = dispatcher.receive(session, '{"type":"tool/list/req","id":"l"}');
  let drains = 0;
  const drain = session.drain.bind(session);
  session.drain = (timeoutMs) => {
    drains++;
    return drain(timeoutMs);
  };
  const shutdowns = [];
  for (let i = 0; i < 1000; i++) {
    shutdowns.push(
      dispatcher.receive(session, `{"type":"shutdown","id":"s${i}"}`),
    );
  }
  assert.equal(drains, 1);
  held.answer();
  await Promise.all([call, ...shutdowns]);
  assert.equal(session.closed, true);
});

Deno.test("receiveValue() answers a call its caller aborted with a reason String() refuses", async () => {
  const sent: OutgoingMessage[] = [];
  const session = new Session({ send: (m) => sent.push(m) });
  const caller = new AbortController();
  caller.abort(Object.create(null));
  await new Dispatcher({ capabilities: [failing] }).receiveValue(session, {
    type: "tool/call/req",
    id: "c1",
    version: "1.0",
    ts: 0,
    tool_name: "t",
    arguments: {},
  }, { signal: caller.signal });
  assert.equal(sent[0]?.type, "error");
  assert.equal(sent[0]?.req_id, "c1");
});

Deno.test("Dispatcher never starts a handler for a call whose signal aborted while it waited", async () => {
  const started: string[] = [];
  const listening: Capability = {
    name: "tools",
    handlers: {
      // Settles only on an abort it sees happen.
      "tool/call/req": ({ request, signal }) => {
        started.push(request.id);
        return new Promise((_, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason))
        );
      },
    },
  };
  const session = new Session({ send() {}, maxParallel: 1 });
  const dispatcher = new Dispatcher({ capabilities: [listening] });
  const calls = ["c0", "c1", "c2"].map((id) =>
    dispatcher.receive(
      session,
      JSON.stringify({
        type: "tool/call/req",
        id,
        version: "1.0",
        ts: 0,
        tool_name: "t",
        arguments: {},
      }),
    )
  );
  session.close("client left");
  assert.equal(await settlesWithin(Promise.all(calls), 5000), true);
  assert.deepEqual(started, ["c0"]);
});

Deno.test("Dispatcher bounds what all sessions' calls hold, past which only a session under its equal share is let in", async () => {
  const answer = Promise.withResolvers<void>();
  const tools: Capability = {
    name: "tools",
    handlers: {
      "tool/call/req": async () => {
        await answer.promise;
        return {
          result: toolOutcome({
            success: true,
            toolName: "x",
            data: null,
            durationMs: 0,
          }),
        };
      },
    },
  };
  const dispatcher = new Dispatcher({
    capabilities: [tools],
    maxHeldBytes: 10_000,
  });
  // Each weighs its JSON (about 3 KB) and 1 KiB of upkeep: about 4 KB.
  const call = (id: string) =>
    JSON.stringify({
      type: "tool/call/req",
      id,
      tool_name: "x",
      arguments: { pad: "x".repeat(3000) },
    });
  const a = record();
  const b = record();
  const running = [
    dispatcher.receive(a.session, call("a1")),
    dispatcher.receive(a.session, call("a2")),
  ];
  // About 8 KB held, all a's: its third would pass the bound.
  await dispatcher.receive(a.session, call("a3"));
  assert.equal(a.sent[0]?.req_id, "a3");
  assert.equal(a.sent[0]?.code, "runtime_error");
  assert.match(
    String(a.sent[0]?.message),
    /the host holds \d+ MiB of calls waiting or running/,
  );
  // b holds nothing: within its equal share (5 KB), it is let in.
  running.push(dispatcher.receive(b.session, call("b1")));
  answer.resolve();
  await Promise.all(running);
  assert.deepEqual(b.sent.map((m) => m.type), ["tool/call/resp"]);
  // Answered calls hold nothing.
  await dispatcher.receive(a.session, call("a4"));
  assert.deepEqual(
    a.sent.map((m) => m.req_id),
    ["a3", "a1", "a2", "a4"],
  );
  assert.equal(a.sent.at(-1)?.type, "tool/call/resp");
});
