/**
 * `run_code` tried as an attacker would, against a real host with real
 * clients: the code is the client's, so it must never gain anything the
 * session could not do with direct calls. A denied tool, another session's
 * toolkit configuration, a forged inner-call channel, a loop against the
 * quotas and `code.max_calls`, recursion through a skill, a huge inner
 * result, and cancellation mid-chain.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type Client, connect } from "../../client/mod.ts";
import type { ToolOutcome } from "../../protocol/tool.ts";
import { getJson } from "../support/console_host.ts";
import type { Host } from "../../runtime/host.ts";
import { codeHost, until } from "./_host.ts";

type Run = Record<string, unknown>;

interface CodeResult {
  value: unknown;
  console: { level: string; text: string }[];
  calls: { name: string; ok: boolean; error_code: string | null }[];
  error: string | null;
}

async function runCode(
  client: Client,
  code: string,
  timeout = 60_000,
): Promise<CodeResult> {
  const outcome: ToolOutcome = await client.tools.call("run_code", { code }, {
    timeout,
  });
  assert.equal(outcome.success, true, JSON.stringify(outcome));
  return outcome.data as CodeResult;
}

async function runs(host: Host, query = "", token = ""): Promise<Run[]> {
  const auth: Record<string, string> = token
    ? { authorization: `Bearer ${token}` }
    : {};
  return (await getJson(host, `/api/runs?limit=1000${query}`, auth))
    .runs as Run[];
}

Deno.test("a tool the policy or the token denies throws tool_denied and never runs", async () => {
  await using t = await codeHost({
    tokens: ["full", "narrow"],
    policy: {
      tools: {
        deny: ["secret_tool"],
        tokens: { narrow: { only: ["run_code", "inc"] } },
      },
    },
  });
  const full = await connect(t.wsUrl, { token: "full" });
  const narrow = await connect(t.wsUrl, { token: "narrow" });
  try {
    // Directly, each is refused.
    await assert.rejects(full.tools.call("secret_tool", {}), /denied/i);
    await assert.rejects(narrow.tools.call("chatty", {}), /denied/i);
    const a = await runCode(
      full,
      `let v = "ran";
       try { await tools.secret_tool({}) } catch (e) { v = [e.code, e.message] }
       v`,
    );
    assert.equal((a.value as string[])[0], "tool_denied");
    assert.match((a.value as string[])[1]!, /secret_tool/);
    const b = await runCode(
      narrow,
      `const out = [];
       out.push((await tools.inc({ n: 1 })).n);
       try { await tools.chatty({}); out.push("ran") } catch (e) { out.push(e.code) }
       out`,
    );
    assert.deepEqual(b.value, [2, "tool_denied"]);
    assert.deepEqual(b.calls.map((c) => [c.name, c.error_code]), [
      ["inc", null],
      ["chatty", "tool_denied"],
    ]);
    const seen = await until(
      () => runs(t.host, "", "full"),
      (r) => r.filter((x) => x.name === "run_code").length === 2,
    );
    assert.ok(
      seen.every((r) =>
        !["secret_tool", "chatty"].includes(String(r.name)) ||
        r.outcome === "tool_denied"
      ),
      "a denied tool ran",
    );
  } finally {
    await full.close();
    await narrow.close();
  }
});

Deno.test("another session's toolkit configuration never reaches this session's inner calls", async () => {
  await using t = await codeHost();
  const rootA = join(t.data, "a");
  const rootB = join(t.data, "b");
  await Deno.mkdir(rootA);
  await Deno.mkdir(rootB);
  await Deno.writeTextFile(join(rootA, "x.txt"), "from A");
  await Deno.writeTextFile(join(rootB, "x.txt"), "from B secret");
  const a = await connect(t.wsUrl);
  const b = await connect(t.wsUrl);
  try {
    await b.toolkits.configure("filesystem", { root: rootB });
    const read = `let v;
      try { v = (await tools.read_file({ path: "x.txt" })).content }
      catch (e) { v = "refused " + e.code + ": " + e.message }
      v`;
    // A has configured nothing: its inner read_file cannot use B's root.
    const before = await runCode(a, read);
    assert.match(String(before.value), /^refused /);
    assert.doesNotMatch(JSON.stringify(before), /from B/);
    await a.toolkits.configure("filesystem", { root: rootA });
    const [fromA, fromB] = await Promise.all([
      runCode(a, read),
      runCode(b, read),
    ]);
    assert.match(String(fromA.value), /from A/);
    assert.doesNotMatch(JSON.stringify(fromA), /from B/);
    assert.match(String(fromB.value), /from B secret/);
    // And outside its root, with B's root named, A's call is refused.
    const escape = await runCode(
      a,
      `let v;
      try { v = (await tools.read_file({ path: ${
        JSON.stringify(join(rootB, "x.txt"))
      } })).content } catch (e) { v = "refused " + e.code }
      v`,
    );
    assert.match(String(escape.value), /^refused /);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("the code cannot forge the inner-call channel", async () => {
  await using t = await codeHost({
    policy: { tools: { deny: ["secret_tool"] } },
  });
  const a = await connect(t.wsUrl);
  const b = await connect(t.wsUrl);
  try {
    const other = b.sessionId;
    const r = await runCode(
      a,
      `const out = {};
      // No way to post a raw frame to the sandbox's main thread.
      let p = globalThis, posters = 0;
      while (p) { if (Object.getOwnPropertyNames(p).includes("postMessage")) posters++; p = Object.getPrototypeOf(p); }
      out.posters = posters;
      // Feed the worker's own loop a forged operation: another session,
      // another run, a denied tool. It cannot start (the globals it would
      // define are taken); had it made an RPC, the sandbox's main thread
      // would drop it (the next test).
      dispatchEvent(new MessageEvent("message", { data: JSON.stringify({
        t: "op", op: "call", id: "forged-op", export: "default", version: "x",
        path: "/x", args: { code: "await tools.secret_tool({}); await tools.inc({ n: 99 })" },
        config: {}, metadata: {}, session: ${
        JSON.stringify(other)
      }, call: "forged-call",
      }) }));
      // Identity fields in the arguments are only arguments.
      try { await tools.inc({ n: 1, session: ${
        JSON.stringify(other)
      }, parent_run_id: "x" }) }
      catch (e) { out.extra = e.code }
      out.after = (await tools.inc({ n: 1 })).n;
      out`,
    );
    const value = r.value as Record<string, unknown>;
    assert.equal(value.posters, 0);
    assert.equal(value.extra, "schema_violation");
    assert.equal(value.after, 2);
    const all = await until(
      () => runs(t.host),
      (x) => x.some((run) => run.name === "run_code"),
    );
    // Nothing ran for B, nothing ran the denied tool, and no inc of 99.
    assert.deepEqual(all.filter((run) => run.session === other), []);
    assert.deepEqual(all.filter((run) => run.name === "secret_tool"), []);
    assert.ok(
      !JSON.stringify(all).includes('"n":99'),
      "the forged operation's call ran",
    );
    const parent = all.find((run) => run.name === "run_code")!;
    for (const run of all.filter((x) => x.name === "inc")) {
      assert.equal(run.parent_id, parent.id);
      assert.equal(run.session, a.sessionId);
    }
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("an RPC under a forged operation never reaches the host", async () => {
  await using t = await codeHost();
  const a = await connect(t.wsUrl);
  try {
    const outcome = await a.skills.call("forger", {});
    assert.equal(outcome.success, true, JSON.stringify(outcome));
    const data = outcome.data as { forged_posted: boolean; real: unknown };
    // The forged operation ran in the worker and sent its RPC...
    assert.equal(data.forged_posted, true);
    assert.deepEqual(data.real, { n: 2 });
    const all = await until(
      () => runs(t.host),
      (x) => x.some((r) => r.name === "forger" && r.outcome !== "running"),
    );
    // ...and the host never ran it: one inc, the real one.
    const incs = all.filter((r) => r.name === "inc");
    assert.deepEqual(incs.map((r) => r.arguments), [{ n: 1 }]);
    assert.deepEqual(all.filter((r) => r.session === "other-session"), []);
  } finally {
    await a.close();
  }
});

Deno.test("a tight loop of inner calls stops at code.max_calls with a clear error", async () => {
  await using t = await codeHost({ maxCalls: 30, store: false });
  const a = await connect(t.wsUrl);
  try {
    const r = await runCode(
      a,
      `let ok = 0, refused = 0, message = "";
       for (let i = 0; i < 100; i++) {
         try { await tools.inc({ n: i }); ok++ } catch (e) { refused++; message = e.code + ": " + e.message }
       }
       ({ ok, refused, message })`,
    );
    const value = r.value as Record<string, unknown>;
    assert.equal(value.ok, 30);
    assert.equal(value.refused, 70);
    assert.match(String(value.message), /^runtime_error: .*code\.max_calls/);
    assert.equal(r.calls.length, 100);
  } finally {
    await a.close();
  }
});

Deno.test("inner calls count against the token's calls_per_minute", async () => {
  await using t = await codeHost({
    tokens: ["metered"],
    policy: { tokens: { metered: { calls_per_minute: 10 } } },
    store: false,
  });
  const a = await connect(t.wsUrl, { token: "metered" });
  try {
    const r = await runCode(
      a,
      `let ok = 0, message = "";
       for (let i = 0; i < 50; i++) {
         try { await tools.inc({ n: i }); ok++ } catch (e) { message = e.code + ": " + e.message; break }
       }
       ({ ok, message })`,
    );
    const value = r.value as Record<string, unknown>;
    // run_code itself was the first of the ten.
    assert.equal(value.ok, 9);
    assert.match(String(value.message), /calls per minute/);
    // The quota the code spent is spent for direct calls too.
    await assert.rejects(a.tools.call("inc", { n: 1 }), /calls per minute/);
  } finally {
    await a.close();
  }
});

Deno.test("inner calls in parallel never run more than max_parallel at once", async () => {
  await using t = await codeHost({ limits: { maxParallel: 2 } });
  const a = await connect(t.wsUrl);
  try {
    const r = await runCode(
      a,
      `(await Promise.all(Array.from({ length: 8 }, () => tools.nap({ ms: 150 })))).length`,
    );
    assert.equal(r.value, 8);
    const naps = await until(
      () => runs(t.host, "&name=nap"),
      (x) => x.length === 8,
    );
    // The most naps whose recorded spans overlap: a bound, not a time.
    const spans = naps.map((n) => ({
      from: Number(n.started_at),
      to: Number(n.ended_at),
    }));
    const overlap = Math.max(
      ...spans.map(({ from }) =>
        spans.filter((s) => s.from <= from && from < s.to).length
      ),
    );
    assert.ok(overlap <= 2, `${overlap} naps ran at once`);
  } finally {
    await a.close();
  }
});

Deno.test("run_code cannot call itself, directly or through a skill", async () => {
  await using t = await codeHost();
  const a = await connect(t.wsUrl);
  try {
    const r = await runCode(
      a,
      `const out = {};
       try { await tools.run_code({ code: "1" }) } catch (e) { out.direct = e.code }
       out.skill = await skills.nest({});
       out`,
    );
    const value = r.value as {
      direct: string;
      skill: { inc: { n: number }; nested: string };
    };
    assert.equal(value.direct, "tool_denied");
    assert.equal(value.skill.inc.n, 2);
    assert.match(value.skill.nested, /^refused: .*run_code/);
    const all = await until(
      () => runs(t.host),
      (x) => x.some((run) => run.name === "nest" && run.outcome !== "running"),
    );
    // One run_code only; the skill and its inc are its descendants.
    const codeRuns = all.filter((run) => run.name === "run_code");
    assert.equal(codeRuns.length, 1);
    const nest = all.find((run) => run.name === "nest")!;
    assert.equal(nest.parent_id, codeRuns[0]!.id);
    const inc = all.find((run) => run.name === "inc")!;
    assert.equal(inc.parent_id, nest.id);
    // Nor can a skill the client calls reach run_code: its code could
    // call any tool, beyond the skill's declared ones.
    const direct = await a.skills.call("nest", {});
    assert.equal(direct.success, true, JSON.stringify(direct));
    assert.match(
      (direct.data as { nested: string }).nested,
      /^refused: .*limited to the tools it declares/,
    );
  } finally {
    await a.close();
  }
});

Deno.test("a huge inner result is refused with a clear error, and the host goes on", async () => {
  await using t = await codeHost({ store: false });
  const a = await connect(t.wsUrl);
  try {
    const r = await runCode(
      a,
      `const out = [];
       for (let i = 0; i < 5; i++) {
         try { out.push((await tools.big({ size: 4_000_000 })).text.length) }
         catch (e) { out.push(e.code + ": " + e.message) }
       }
       out.push((await tools.big({ size: 500_000 })).text.length);
       out`,
    );
    const value = r.value as (string | number)[];
    for (const line of value.slice(0, 5)) {
      assert.match(String(line), /^tool_error: .*max_result_bytes/);
    }
    assert.equal(value[5], 500_000);
    // The run_code result itself stays small: the code returned lengths.
    assert.ok(JSON.stringify(r).length < 10_000);
  } finally {
    await a.close();
  }
});

Deno.test("an inner result the sandbox cut is refused, never handed on cut", async () => {
  await using t = await codeHost({ store: false });
  const a = await connect(t.wsUrl);
  try {
    // The sandbox cuts a string to its longest prefix whose JSON literal
    // fits the bound (1,048,576 characters here): before a control
    // character (six characters as JSON) the cut one's JSON is a little
    // under the bound. Directly, the outcome says it was cut.
    const args = { size: 1_048_576 - 3, bare: true, control: 10 };
    const direct = await a.tools.call("big", args);
    assert.equal(direct.truncated, true);
    assert.equal((direct.data as string).length, args.size);
    const r = await runCode(
      a,
      `let out;
       try { out = (await tools.big(${JSON.stringify(args)})).length }
       catch (e) { out = e.code + ": " + e.message }
       out`,
    );
    assert.match(String(r.value), /^tool_error: .*max_result_bytes/);
  } finally {
    await a.close();
  }
});

Deno.test("an inner result the sandbox turned into its JSON text is refused", async () => {
  await using t = await codeHost({ store: false });
  const a = await connect(t.wsUrl);
  try {
    // An output() whose whole JSON is over the bound has its data cut
    // alone: an object becomes its JSON text, a string far under the bound.
    const args = { size: 1_048_576 - 1000, summary: 5000 };
    const direct = await a.tools.call("big", args);
    assert.equal(direct.truncated, true);
    assert.equal(typeof direct.data, "string");
    const r = await runCode(
      a,
      `let out;
       try { out = typeof (await tools.big(${JSON.stringify(args)})) }
       catch (e) { out = e.code + ": " + e.message }
       out`,
    );
    assert.match(String(r.value), /^tool_error: .*max_result_bytes/);
    // Truncated for its events alone, a whole result still goes through.
    const chatty = await a.tools.call("chatty", { more: 1500 });
    assert.equal(chatty.truncated, true);
    const whole = await runCode(a, `await tools.chatty({ more: 1500 })`);
    assert.deepEqual(whole.value, { done: true });
  } finally {
    await a.close();
  }
});

Deno.test("a skill result the sandbox cut is refused, never handed on cut", async () => {
  await using t = await codeHost({ store: false });
  const a = await connect(t.wsUrl);
  try {
    // As for a tool (above): the cut string's JSON is under the bound.
    const args = { size: 1_048_576 - 3, control: 10 };
    const direct = await a.skills.call("big_skill", args);
    assert.equal(direct.truncated, true);
    assert.equal((direct.data as string).length, args.size);
    const r = await runCode(
      a,
      `let out;
       try { out = (await skills.big_skill(${JSON.stringify(args)})).length }
       catch (e) { out = e.code + ": " + e.message }
       out`,
    );
    assert.match(String(r.value), /^tool_error: .*max_result_bytes/);
  } finally {
    await a.close();
  }
});

Deno.test("inner arguments that are not an object are refused, as on the wire", async () => {
  await using t = await codeHost({ store: false });
  const a = await connect(t.wsUrl);
  try {
    // A module declared with an open input schema still gets an object.
    const direct = await a.tools.call("args_shape", {});
    assert.deepEqual(direct.data, { array: false, type: "object" });
    const r = await runCode(
      a,
      `const out = [];
       for (const call of [() => tools.args_shape([1, 2]),
                           () => skills.args_shape_skill(["x"]),
                           () => tools.args_shape(null),
                           () => tools.args_shape({})]) {
         try { out.push(await call()) } catch (e) { out.push(e.code) }
       }
       out`,
    );
    assert.deepEqual(r.value, [
      "schema_violation",
      "schema_violation",
      { array: false, type: "object" },
      { array: false, type: "object" },
    ]);
  } finally {
    await a.close();
  }
});

Deno.test("cancelling run_code mid-chain aborts its inner call and starts no more", async () => {
  await using t = await codeHost();
  const cancel = new AbortController();
  const call = t.host.callTool("run_code", {
    code: `await tools.inc({ n: 1 });
      await tools.wait({});
      await tools.inc({ n: 100 });`,
  }, { signal: cancel.signal, timeout: 60 });
  await until(
    async () => (await getJson(t.host, "/api/overview")).running as Run[],
    (running) => running.some((r) => r.name === "wait"),
  );
  cancel.abort("the test cancels");
  await call.then(
    (outcome) => assert.equal(outcome.success, false),
    () => {},
  );
  const all = await until(
    () => runs(t.host),
    (x) =>
      x.some((r) => r.name === "run_code" && r.outcome !== "running") &&
      x.some((r) => r.name === "wait" && r.outcome !== "running"),
  );
  const wait = all.find((r) => r.name === "wait")!;
  assert.notEqual(wait.outcome, "ok");
  assert.equal(all.filter((r) => r.name === "inc").length, 1);
  const overview = await until(
    () => getJson(t.host, "/api/overview"),
    (o) => (o.running as Run[]).length === 0,
  );
  assert.deepEqual(overview.running, []);
});

Deno.test("a run_code that times out aborts its inner call", async () => {
  await using t = await codeHost();
  const a = await connect(t.wsUrl);
  try {
    const outcome = await a.tools.call("run_code", {
      code: `await tools.wait({}); await tools.inc({ n: 100 });`,
    }, { timeout: 2_000 });
    assert.equal(outcome.success, false);
    assert.equal(outcome.errorCode, "timeout");
    const all = await until(
      () => runs(t.host),
      (x) => x.some((r) => r.name === "wait" && r.outcome !== "running"),
    );
    // Aborted with run_code, not left to run out its own time.
    const wait = all.find((r) => r.name === "wait")!;
    assert.notEqual(wait.outcome, "ok");
    assert.match(String(wait.error), /cancel/i, JSON.stringify(wait));
    assert.equal(all.filter((r) => r.name === "inc").length, 0);
  } finally {
    await a.close();
  }
});
