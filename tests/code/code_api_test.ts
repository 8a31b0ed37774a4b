/**
 * `code_api` over A2E with the repository's own client: what a session is
 * told `tools` and `skills` hold follows its token's policy, its toolkit
 * configuration and the registry as it reloads; the call takes the normal
 * path (validation, policy, run history); the declarations compile, and
 * their types are real.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { connect } from "../../client/mod.ts";
import type { Client } from "../../client/mod.ts";
import {
  compile,
  type Declared,
  HOSTILE,
  startCodeApiHost,
  TOKEN_A,
  TOKEN_B,
  TOKEN_C,
  tool,
} from "./_code_api_host.ts";
import { within } from "../mcp/_host.ts";

async function declared(
  client: Client,
  args: Record<string, unknown> = {},
): Promise<Declared> {
  const outcome = await client.tools.call("code_api", args);
  assert.equal(outcome.success, true, outcome.error ?? "");
  return outcome.data as Declared;
}

Deno.test("code_api declares what this session may call, and nothing of another's", async () => {
  await using fixture = await startCodeApiHost();
  const wsUrl = fixture.url.replace("http", "ws") + "/a2e";
  const a = await connect(wsUrl, { token: TOKEN_A });
  const b = await connect(wsUrl, { token: TOKEN_B });
  try {
    // Both at once: one session's view never shows in the other's.
    const [forA, forB] = await Promise.all([declared(a), declared(b)]);
    for (const name of ["code_api", "eval_typescript", "hostile_tool"]) {
      assert.ok(forA.tools.includes(name), name);
    }
    assert.ok(forA.tools.includes("weather_forecast"), "deferred tools too");
    assert.ok(!forA.tools.includes("secret_tool"), "the policy denies it to A");
    assert.ok(forB.tools.includes("secret_tool"), "B's token may call it");
    assert.ok(!forA.declarations.includes("secret_tool"));
    for (const view of [forA, forB]) {
      assert.ok(!view.tools.includes("run_code"), "never run_code itself");
      assert.ok(!view.tools.includes("read_file"), "filesystem unconfigured");
      assert.match(view.declarations, /toolkit "filesystem" \(.*read_file/);
      assert.ok(view.skills.includes("csv_profile"));
    }
    assert.match(forA.declarations, /^\s+weather_forecast: \(args: \{$/m);

    // A's toolkit configuration is A's: B's declarations do not change.
    // Throws unless the host answers "ok".
    await a.toolkits.configure("filesystem", { root: fixture.data });
    const [againA, againB] = await Promise.all([declared(a), declared(b)]);
    assert.ok(againA.tools.includes("read_file"));
    assert.ok(!againA.declarations.includes('toolkit "filesystem"'));
    assert.ok(!againB.tools.includes("read_file"));
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("code_api follows a tool added to a watched folder", async () => {
  await using fixture = await startCodeApiHost();
  const client = await connect(fixture.url.replace("http", "ws") + "/a2e", {
    token: TOKEN_A,
  });
  try {
    assert.ok(!(await declared(client)).tools.includes("fresh_tool"));
    const reloaded = new Promise<void>((resolve) => {
      client.onPush((message) => {
        if (message.kind === "tools.changed") resolve();
      });
    });
    await Deno.writeTextFile(
      join(fixture.skills, "fresh.ts"),
      tool("fresh_tool", "Appeared after the start"),
    );
    await within(reloaded, 20_000, "the host reloads the folder");
    const after = await declared(client);
    assert.ok(after.tools.includes("fresh_tool"));
    assert.match(after.declarations, /Appeared after the start/);
  } finally {
    await client.close();
  }
});

Deno.test("code_api takes the call path: validation, policy, history", async () => {
  await using fixture = await startCodeApiHost();
  const wsUrl = fixture.url.replace("http", "ws") + "/a2e";
  const a = await connect(wsUrl, { token: TOKEN_A });
  const c = await connect(wsUrl, { token: TOKEN_C });
  try {
    const bad = await a.tools.call("code_api", { limit: 0 });
    assert.equal(bad.errorCode, "schema_violation");
    const long = await a.tools.call("code_api", { query: "x".repeat(600) });
    assert.equal(long.errorCode, "schema_violation");
    await assert.rejects(
      async () => await c.tools.call("code_api", {}),
      { code: "tool_denied" },
    );
    await declared(a, { query: "weather" });
    const runs = await (await fetch(`${fixture.url}/api/runs?limit=50`, {
      headers: { authorization: `Bearer ${TOKEN_A}` },
    })).text();
    assert.match(runs, /"code_api"/, "the call is in A's run history");
  } finally {
    await a.close();
    await c.close();
  }
});

Deno.test("code_api narrows by query, and junk queries stay valid", async () => {
  await using fixture = await startCodeApiHost();
  const client = await connect(fixture.url.replace("http", "ws") + "/a2e", {
    token: TOKEN_A,
  });
  try {
    const all = await declared(client);
    const found = await declared(client, {
      query: "weather forecast for a city",
      limit: 3,
    });
    assert.equal(found.tools[0], "weather_forecast");
    assert.ok(found.tools.length <= 3);
    assert.ok(found.declarations.length < all.declarations.length);
    for (
      const query of [
        "\u0000\u2028 */ %%% ;;",
        "zzzqqq xyzzy",
        "the a of",
        HOSTILE,
      ]
    ) {
      const junk = await declared(client, { query });
      if (query !== HOSTILE) {
        assert.deepEqual(junk.tools, [], JSON.stringify(query));
      }
      const errors = await compile(junk.declarations, {
        junk: "const t: {} = tools; console.log(t);",
        injected: "const n: number = injected;",
      });
      assert.equal(errors.junk, "", JSON.stringify(query));
      assert.match(errors.injected ?? "", /Cannot find name 'injected'/);
    }
  } finally {
    await client.close();
  }
});

Deno.test("code_api's declarations of the shipped and hostile tools compile and are typed", async () => {
  await using fixture = await startCodeApiHost();
  const client = await connect(fixture.url.replace("http", "ws") + "/a2e", {
    token: TOKEN_A,
  });
  try {
    await client.toolkits.configure("filesystem", { root: fixture.data });
    const { declarations, tools } = await declared(client);
    for (const name of ["read_file", "write_file", "grep", "hostile_tool"]) {
      assert.ok(tools.includes(name), name);
    }
    assert.ok(!declarations.includes(HOSTILE), "a comment was closed");
    assert.ok(declarations.length < 200_000, `${declarations.length} chars`);
    const errors = await compile(declarations, {
      good: `
const file = await tools.read_file({ path: "a.txt" });
const value = (await tools.eval_typescript({ code: "1 + 1" })).value;
const forecast: number = (await tools.weather_forecast({ city: "Oslo" })).celsius;
await tools.hostile_tool({ "constructor": "c", p0: "x", tree: { children: [{}] } });
const api = await tools.code_api({ query: "files" });
const text: string = api.declarations;
await skills.csv_profile({ csv: "a,b\\n1,2" });
console.log(file, value, forecast, text);
`,
      denied: `await tools.secret_tool({ n: 1 });`,
      wrong_type: `await tools.eval_typescript({ code: 1 });`,
      missing: `await tools.weather_forecast({});`,
      result:
        `const s: string = (await tools.weather_forecast({ city: "x" })).celsius;`,
      injected: `const n: number = injected;`,
    });
    assert.equal(errors.good, "", errors.good);
    for (const name of ["denied", "wrong_type", "missing", "result"]) {
      assert.notEqual(errors[name], "", `${name} compiled`);
    }
    assert.match(errors.injected ?? "", /Cannot find name 'injected'/);
  } finally {
    await client.close();
  }
});
