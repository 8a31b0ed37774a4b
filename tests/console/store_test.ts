/**
 * The run history end to end: a real host, real sandboxes, the SQLite store
 * in a temporary folder.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fixtureHost, getJson } from "../support/console_host.ts";

type Run = Record<string, unknown>;

async function runs(
  host: Parameters<typeof getJson>[0],
  query = "",
): Promise<Run[]> {
  return (await getJson(host, `/api/runs?limit=100${query}`)).runs as Run[];
}

Deno.test("the store records every outcome of a tool call", async () => {
  await using t = await fixtureHost();
  const { host } = t;
  await host.callTool("add", { a: 1, b: 2 });
  await host.callTool("fail", {});
  await host.callTool("spin", {}, { timeout: 0.5 });
  await host.callTool("oom", {}, { timeout: 30 });
  await assert.rejects(host.callTool("netty", {}));
  await assert.rejects(host.callTool("no_such_tool", {}));
  const cancel = new AbortController();
  const waiting = host.callTool("wait", {}, {
    signal: cancel.signal,
    timeout: 30,
  });
  // Cancel once the run is live.
  await waitFor(async () =>
    ((await getJson(host, "/api/overview")).running as Run[]).some((r) =>
      r.name === "wait"
    )
  );
  cancel.abort("the test cancels");
  await waiting.catch(() => {});
  await waitFor(async () => (await runs(host)).some((r) => r.name === "wait"));

  const byName = new Map((await runs(host)).map((r) => [r.name, r]));
  assert.equal(byName.get("add")?.outcome, "ok");
  assert.deepEqual(byName.get("add")?.result, { sum: 3 });
  assert.deepEqual(byName.get("add")?.arguments, { a: 1, b: 2 });
  assert.equal(byName.get("fail")?.outcome, "tool_error");
  assert.match(String(byName.get("fail")?.error), /it broke/);
  assert.equal(byName.get("spin")?.outcome, "timeout");
  assert.equal(byName.get("oom")?.outcome, "out_of_memory");
  assert.equal(byName.get("netty")?.outcome, "tool_denied");
  assert.equal(byName.get("no_such_tool")?.outcome, "unknown_tool");
  assert.notEqual(byName.get("wait")?.outcome, "ok");
  assert.equal(byName.get("add")?.transport, "in-process");

  const detail = await getJson(host, `/api/runs/${byName.get("add")?.id}`);
  const events = detail.events as {
    kind: string;
    data: Record<string, unknown>;
  }[];
  assert.deepEqual(events.map((e) => e.kind), ["progress"]);
  assert.equal(events[0]?.data.pct, 50);
});

Deno.test("a skill run is recorded with its tool call as a child run", async () => {
  await using t = await fixtureHost();
  const result = await t.host.callSkill("steps", {});
  assert.equal(result.success, true);
  const skill = (await runs(t.host, "&kind=skill"))[0]!;
  assert.equal(skill.name, "steps");
  assert.equal(skill.outcome, "ok");
  const detail = await getJson(t.host, `/api/runs/${skill.id}`);
  const children = detail.children as Run[];
  assert.deepEqual(children.map((c) => [c.name, c.outcome, c.parent_id]), [[
    "add",
    "ok",
    skill.id,
  ]]);
  const kinds = (detail.events as { kind: string }[]).map((e) => e.kind);
  assert.equal(kinds[0], "skill.started");
  assert.equal(kinds.at(-1), "skill.completed");
  assert.ok(kinds.includes("tool.started"));
});

Deno.test("the history survives a host restart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_console_" });
  try {
    {
      await using t = await fixtureHost({ dir });
      await t.host.callTool("add", { a: 20, b: 22 });
    }
    await using again = await fixtureHost({ dir });
    const found = await runs(again.host, "&name=add");
    assert.equal(found.length, 1);
    assert.deepEqual(found[0]?.result, { sum: 42 });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("no secret reaches the database or the API", async () => {
  const OPERATOR = "operator-token-7f3a9c";
  const LLM_KEY = "sk-llm-key-5b2e81";
  const KIT = "vault-secret-c0ffee99";
  await using t = await fixtureHost({
    tokens: [OPERATOR],
    // The operator's in-process calls are shown to admin tokens only.
    adminTokens: [OPERATOR],
    llm: [{
      provider_name: "openai",
      provider_credentials: { api_key: LLM_KEY },
      provider_config: { base_url: "http://127.0.0.1:9/v1", model: "m" },
      is_default: true,
    }],
    toolkits: { vault: { token: KIT } },
  });
  const { host } = t;
  await host.callTool("echo", {
    note: `carry ${OPERATOR} and ${LLM_KEY}`,
    api_key: "client-own-key-123",
    nested: { password: "hunter2hunter2" },
  });
  const leaked = await host.callTool("leak", {}, { onEvent: () => {} });
  assert.equal(leaked.success, true);
  const auth = { authorization: `Bearer ${OPERATOR}` };
  const api = JSON.stringify([
    await getJson(host, "/api/runs", auth),
    ...await Promise.all(
      ((await getJson(host, "/api/runs", auth)).runs as Run[]).map((r) =>
        getJson(host, `/api/runs/${r.id}`, auth)
      ),
    ),
  ]);
  await host.close();
  const bytes = new TextDecoder().decode(await Deno.readFile(t.dbPath));
  const wal = await Deno.readFile(`${t.dbPath}-wal`).then(
    (b) => new TextDecoder().decode(b),
    () => "",
  );
  for (
    const secret of [
      OPERATOR,
      LLM_KEY,
      KIT,
      "client-own-key-123",
      "hunter2hunter2",
    ]
  ) {
    assert.ok(!api.includes(secret), `API shows ${secret}`);
    assert.ok(
      !bytes.includes(secret) && !wal.includes(secret),
      `DB holds ${secret}`,
    );
  }
  assert.ok(api.includes("[redacted]"));
  assert.ok(api.includes('"leak"'));
});

Deno.test("a huge argument is kept size-capped", async () => {
  await using t = await fixtureHost();
  await t.host.callTool("echo", { big: "x".repeat(2_000_000) });
  const run = (await runs(t.host))[0]!;
  assert.ok(JSON.stringify(run.arguments).length < 20_000);
  assert.ok(JSON.stringify(run.result).length < 20_000);
});

// Root ignores file modes: a read-only folder is then one the kernel refuses
// to create files in for anyone (/proc).
const IS_ROOT = Deno.uid() === 0;

for (
  const [name, prepare] of [
    ["read-only", async (dir: string) => {
      if (IS_ROOT) return "/proc/skillbox-console-test/runs.db";
      const db = join(dir, "ro", "runs.db");
      await Deno.mkdir(join(dir, "ro"));
      await Deno.chmod(join(dir, "ro"), 0o555);
      return db;
    }],
    ["corrupt", async (dir: string) => {
      const db = join(dir, "runs.db");
      await Deno.writeTextFile(db, "this is not a database ".repeat(400));
      return db;
    }],
  ] as const
) {
  Deno.test(`a ${name} database is reported once and calls keep working`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "skillbox_console_" });
    const db = await prepare(dir);
    const lines: string[] = [];
    try {
      await using t = await fixtureHost({
        dir,
        store: { path: db, maxRuns: 100, maxAgeDays: 1 },
        log: (l) => lines.push(l),
      });
      for (let i = 0; i < 3; i++) {
        assert.deepEqual((await t.host.callTool("add", { a: i, b: 1 })).data, {
          sum: i + 1,
        });
      }
      await getJson(t.host, "/api/runs");
      const reports = lines.filter((l) => /run store/.test(l));
      assert.equal(reports.length, 1, lines.join("\n"));
      assert.match(reports[0]!, /calls keep working/);
      const metrics =
        await (await t.host.fetch(new Request("http://localhost/metrics")))
          .text();
      assert.match(metrics, /skillbox_store_errors_total [1-9]/);
      assert.match(
        metrics,
        /skillbox_calls_total\{kind="tool",name="add",outcome="ok"\} 3/,
      );
    } finally {
      await Deno.chmod(join(dir, "ro"), 0o755).catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  });
}

async function waitFor(
  check: () => Promise<boolean>,
  ms = 10_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}
