/**
 * A module's `pattern` must not hold the host's thread. A drop-in tool's
 * input schema declares `^(a+)+$`, which a backtracking engine takes 2^n
 * steps to refuse on n "a"s and a "!"; any client can send such a string
 * as the argument. The host checks arguments on its own thread, so each
 * such call held every session (24 characters: 0.1 s; 40: hours). Tried
 * against a host in its own process: after the hostile call, another
 * session's call is answered, and the hostile one gets its refusal.
 * A pattern the host cannot match in linear time (lookaround,
 * backreferences) keeps its tool from loading, with the reason.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startHostProcess } from "./_host_process.ts";
import { within } from "./_helpers.ts";
import { openWs, type RawWs } from "../support/ws_client.ts";

const FILES: Record<string, string> = {
  "match.ts":
    `export default { kind: "tool", name: "match", description: "Takes a string of a's",
  input: { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } },
  run(args) { return { length: args.s.length }; } };`,
  "keys.ts":
    `export default { kind: "tool", name: "keys", description: "Takes keys of a's",
  input: { type: "object", patternProperties: { "^(a+)+$": { type: "number" } } },
  run(args) { return { keys: Object.keys(args).length }; } };`,
  "look.ts":
    `export default { kind: "tool", name: "look", description: "Uses a lookahead",
  input: { type: "object", properties: { s: { type: "string", pattern: "^(?=a)(a+)+$" } } },
  run() { return {}; } };`,
  "add.ts": `export default { kind: "tool", name: "add", description: "Adds",
  input: { type: "object" }, run(args) { return { sum: args.a + args.b }; } };`,
};

let ids = 0;
async function call(
  ws: RawWs,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const id = `c${++ids}`;
  ws.send(JSON.stringify({
    type: "tool/call/req",
    id,
    version: "1.0",
    ts: Date.now() / 1000,
    tool_name: name,
    arguments: args,
  }));
  for (;;) {
    const msg = await ws.next(60_000);
    if (msg.req_id === id && msg.type !== "tool/event") return msg;
  }
}

// The call's outcome, as the wire carries it.
const data = (msg: Record<string, unknown>) =>
  msg.data as Record<string, unknown>;

async function session(url: string): Promise<RawWs> {
  const ws = await openWs(url.replace("http", "ws") + "/a2e");
  ws.send(JSON.stringify({
    type: "handshake/req",
    id: "h",
    version: "1.0",
    ts: Date.now() / 1000,
    agent_caps: ["tools"],
  }));
  assert.equal((await ws.next(10_000)).type, "handshake/resp");
  return ws;
}

Deno.test("a module's backtracking pattern does not hold the host's thread", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_regex_" });
  for (const [name, source] of Object.entries(FILES)) {
    await Deno.writeTextFile(join(dir, name), source);
  }
  await using host = await startHostProcess({ skills: [dir] });
  const a = await session(host.url);
  const b = await session(host.url);
  try {
    await t.step(
      "a hostile value is refused and the host answers others",
      async () => {
        const evil = "a".repeat(40) + "!";
        const hostile = call(a, "match", { s: evil });
        const keys = call(a, "keys", { [evil]: 1 });
        // 2^40 backtracking steps would take hours: the bound only catches
        // a host that is stuck, it measures nothing.
        const other = await within(
          call(b, "add", { a: 1, b: 2 }),
          30_000,
          "another session's call while a hostile pattern is checked",
        );
        assert.deepEqual(data(other).data, { sum: 3 }, JSON.stringify(other));
        const refused = data(await within(hostile, 30_000, "the refusal"));
        assert.equal(refused.success, false);
        assert.equal(refused.error_code, "schema_violation");
        assert.match(String(refused.error), /"s"/);
        const keyed = data(await within(keys, 30_000, "the refusal"));
        // No key of its matches, so nothing constrains it: checked, accepted.
        assert.deepEqual(keyed.data, { keys: 1 }, JSON.stringify(keyed));
      },
    );

    await t.step("values that match are accepted", async () => {
      const ok = data(await call(a, "match", { s: "aaaa" }));
      assert.deepEqual(ok.data, { length: 4 }, JSON.stringify(ok));
      const keyed = data(await call(a, "keys", { aa: 1, b: "x" }));
      assert.deepEqual(keyed.data, { keys: 2 }, JSON.stringify(keyed));
      const wrong = data(await call(a, "keys", { aa: "x" }));
      assert.equal(wrong.error_code, "schema_violation");
    });

    await t.step(
      "a pattern outside linear-time syntax keeps its tool out",
      async () => {
        const answer = JSON.stringify(await call(a, "look", { s: "aa" }));
        assert.match(answer, /"unknown_tool"/);
        const line = await host.waitForLine(/Cannot load tool "look"/, 10_000);
        assert.match(line, /\(\?=a\)/);
      },
    );
  } finally {
    await a.close();
    await b.close();
    await Deno.remove(dir, { recursive: true });
  }
});
