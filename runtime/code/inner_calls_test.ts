import assert from "node:assert/strict";
import { CodeCalls, type CodeRun } from "./inner_calls.ts";
import type { SessionToolCall } from "../tools/call.ts";
import { PermissionDeniedError } from "../../protocol/errors.ts";
import { Semaphore } from "../slots.ts";

const session = {
  id: "s",
  token: "t",
  state: new Map(),
  send() {},
  signal: new AbortController().signal,
};

// A run over a stand-in caller that records what it was asked.
function fakeRun(
  answer: (req: SessionToolCall) => unknown,
  seen: SessionToolCall[] = [],
): CodeRun & { events: [string, Record<string, unknown>][] } {
  const events: [string, Record<string, unknown>][] = [];
  return {
    caller: {
      call: async (req) => {
        seen.push(req);
        const data = await answer(req);
        return {
          breakLoop: false,
          entry: {} as never,
          result: {
            success: true,
            data,
            toolName: req.name,
            truncated: false,
            events: [],
          } as never,
        };
      },
    },
    session,
    runId: "parent",
    timeoutMs: 5_000,
    onEvent: (kind, data) => events.push([kind, data]),
    events,
  };
}

const signal = new AbortController().signal;

Deno.test("an inner call carries the run's session, parent and time, never the sandbox's", async () => {
  const seen: SessionToolCall[] = [];
  const call = new CodeCalls().open(fakeRun(() => ({ n: 2 }), seen));
  const answer = await call("inc", { n: 1 }, signal);
  assert.deepEqual(answer.ok ? answer.data : null, { n: 2 });
  assert.equal(seen[0]?.session, session);
  assert.equal(seen[0]?.parentRunId, "parent");
  assert.ok(seen[0]!.timeoutSeconds! > 5 && seen[0]!.timeoutSeconds! <= 6);
  assert.equal(seen[0]?.signal, signal);
});

Deno.test("run_code is refused as an inner call, and code.max_calls bounds the rest", async () => {
  const call = new CodeCalls({ maxCalls: 2 }).open(fakeRun(() => 1));
  const nested = await call("run_code", { code: "1" }, signal);
  assert.equal(nested.ok ? "" : nested.code, "tool_denied");
  assert.equal((await call("inc", {}, signal)).ok, true);
  const over = await call("inc", {}, signal);
  assert.equal(over.ok, false);
  assert.match(over.ok ? "" : over.message, /code\.max_calls/);
});

Deno.test("a thrown A2E error and a result past the bound come back as failures", async () => {
  const call = new CodeCalls({ maxResultBytes: 100 }).open(fakeRun((req) => {
    if (req.name === "secret") throw new PermissionDeniedError("Denied");
    return "x".repeat(200);
  }));
  const denied = await call("secret", {}, signal);
  assert.deepEqual(denied.ok ? null : [denied.code, denied.message], [
    "tool_denied",
    "Denied",
  ]);
  const big = await call("big", {}, signal);
  assert.match(
    big.ok ? "" : big.message,
    /202 characters of JSON is over the bound of 100/,
  );
});

Deno.test("every inner call is admitted, and its slot is freed after", async () => {
  const held: string[] = [];
  const call = new CodeCalls({
    admit: (s, slot) => {
      assert.equal(s, session);
      assert.ok(slot.lent instanceof Semaphore);
      held.push("take");
      return Promise.resolve(() => held.push("free"));
    },
  }).open(fakeRun(() => 1));
  await call("inc", {}, signal);
  await call("inc", {}, signal);
  assert.deepEqual(held, ["take", "free", "take", "free"]);
});

Deno.test("an inner tool's progress is relayed with its name; lifecycle kinds are not", async () => {
  const run = fakeRun((req) => {
    req.onEvent?.({ kind: "progress", data: { pct: 50 }, seq: 0 });
    req.onEvent?.({ kind: "artifact", data: { name: "a" }, seq: 1 });
    return 1;
  });
  await new CodeCalls().open(run)("chatty", {}, signal);
  assert.deepEqual(run.events, [["progress", { pct: 50, tool: "chatty" }]]);
});

Deno.test("a skill call without a skill runner is refused as unknown", async () => {
  const call = new CodeCalls().open(fakeRun(() => 1));
  const answer = await call("skills/csv_profile", {}, signal);
  assert.equal(answer.ok ? "" : answer.code, "unknown_skill");
});

Deno.test("an imported tool's whole data goes through though an artifact was left out", async () => {
  // The importer cuts a result to a string of exactly the bound (its JSON
  // is then over it), and flags truncated when it leaves an artifact out
  // with the data whole: for its tools the size alone tells a cut.
  const outcome = (origin: string, data: unknown) => ({
    call: () =>
      Promise.resolve({
        breakLoop: false,
        entry: { origin } as never,
        result: {
          success: true,
          data,
          toolName: "x",
          truncated: true,
          events: [],
        } as never,
      }),
  });
  const open = (origin: string, data: unknown) =>
    new CodeCalls({ maxResultBytes: 100 }).open({
      ...fakeRun(() => null),
      caller: outcome(origin, data),
    });
  const signal = new AbortController().signal;
  const whole = await open("mcp", { rows: 3 })("github__search", {}, signal);
  assert.deepEqual(whole.ok && whole.data, { rows: 3 });
  const cut = await open("mcp", "y".repeat(100))("github__search", {}, signal);
  assert.equal(cut.ok, false);
  // A sandbox tool's flag, its events whole, is its data's.
  const local = await open("file", { rows: 3 })("local", {}, signal);
  assert.equal(local.ok, false);
});
