/**
 * The console's HTTP surface in-process (`host.fetch`, Hono's
 * `app.request()` underneath): auth, metrics, the JSON API and live SSE.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost } from "../../runtime/host.ts";
import { defaultConfig } from "../../runtime/config.ts";
import { fixtureHost, FIXTURES, getJson } from "../support/console_host.ts";

const TOKEN = "console-test-token-1";

function get(
  host: {
    fetch: (
      r: Request,
      info?: Deno.ServeHandlerInfo,
    ) => Response | Promise<Response>;
  },
  path: string,
  init: RequestInit = {},
  info?: Deno.ServeHandlerInfo,
) {
  return Promise.resolve(
    host.fetch(
      new Request(`http://127.0.0.1:8787${path}`, {
        redirect: "manual",
        ...init,
      }),
      info,
    ),
  );
}

Deno.test("with tokens, the console, /api and /metrics refuse a request without one", async () => {
  await using t = await fixtureHost({ tokens: [TOKEN] });
  const { host } = t;
  const page = await get(host, "/");
  assert.equal(page.status, 303);
  assert.equal(page.headers.get("location"), "/login");
  await page.body?.cancel();
  const paths = [
    "/api/runs",
    "/api/stats",
    "/api/catalog",
    "/api/overview",
    "/api/live",
    "/metrics",
  ];
  for (const [i, path] of paths.entries()) {
    // Each path from an address of its own: a right token clears no
    // address's count of wrong ones, and 12 in a row would be throttled.
    const client: Deno.ServeHandlerInfo = {
      remoteAddr: { transport: "tcp", hostname: `10.0.1.${i}`, port: 5000 },
      completed: Promise.resolve(),
    };
    for (
      const auth of [undefined, "Bearer wrong-token", `Basic ${btoa(TOKEN)}`]
    ) {
      const res = await get(host, path, {
        headers: auth ? { authorization: auth } : {},
      }, client);
      assert.equal(res.status, 401, `${path} with ${auth}`);
      await res.body?.cancel();
    }
    const ok = await get(host, path === "/api/live" ? "/api/runs" : path, {
      headers: { authorization: `Bearer ${TOKEN}` },
    }, client);
    assert.equal(ok.status, 200, path);
    await ok.body?.cancel();
  }
  const forged = await get(host, "/api/runs", {
    headers: { cookie: "skillbox_console=" + "0".repeat(64) },
  });
  assert.equal(forged.status, 401);
  await forged.body?.cancel();
});

Deno.test("the login form sets an HttpOnly SameSite=Strict cookie that is not the token", async () => {
  await using t = await fixtureHost({ tokens: [TOKEN] });
  const { host } = t;
  const post = (token: string, origin?: string) =>
    get(host, "/login", {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        ...(origin ? { origin } : {}),
      },
      body: new URLSearchParams({ token }).toString(),
    });
  const bad = await post("nope");
  assert.equal(bad.status, 401);
  assert.equal(bad.headers.get("set-cookie"), null);
  await bad.body?.cancel();
  // A valid token padded past the form's 4 KiB cap is refused unread.
  const padded = await get(host, "/login", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: TOKEN, pad: "x".repeat(5000) })
      .toString(),
  });
  assert.equal(padded.status, 401);
  assert.equal(padded.headers.get("set-cookie"), null);
  await padded.body?.cancel();
  const crossSite = await post(TOKEN, "http://evil.example");
  assert.equal(crossSite.status, 403);
  await crossSite.body?.cancel();
  const good = await post(TOKEN, "http://127.0.0.1:8787");
  assert.equal(good.status, 303);
  const cookie = good.headers.get("set-cookie") ?? "";
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  assert.ok(!cookie.includes(TOKEN));
  const pair = cookie.split(";")[0]!;
  const page = await get(host, "/", { headers: { cookie: pair } });
  assert.equal(page.status, 200);
  assert.match(
    page.headers.get("content-security-policy") ?? "",
    /script-src 'self'/,
  );
  assert.match(await page.text(), /Sign out/);
  const out = await get(host, "/logout", {
    method: "POST",
    headers: { cookie: pair },
  });
  await out.body?.cancel();
  const after = await get(host, "/api/runs", { headers: { cookie: pair } });
  assert.equal(after.status, 401);
  await after.body?.cancel();
});

Deno.test("the API sets no permissive CORS and is read-only", async () => {
  await using t = await fixtureHost();
  const res = await get(t.host, "/api/runs", {
    headers: { origin: "http://evil.example" },
  });
  assert.equal(res.headers.get("access-control-allow-origin"), null);
  await res.body?.cancel();
  for (const method of ["POST", "PUT", "DELETE"]) {
    const write = await get(t.host, "/api/runs", { method });
    assert.ok(
      write.status === 404 || write.status === 405,
      `${method} ${write.status}`,
    );
    await write.body?.cancel();
  }
});

Deno.test("metrics counters move by exactly one per call", async () => {
  await using t = await fixtureHost();
  const { host } = t;
  const scrape = async () => await (await get(host, "/metrics")).text();
  const count = (text: string, pattern: RegExp) =>
    Number(pattern.exec(text)?.[1] ?? 0);
  const okAdd =
    /skillbox_calls_total\{kind="tool",name="add",outcome="ok"\} (\d+)/;
  const failed =
    /skillbox_calls_total\{kind="tool",name="fail",outcome="tool_error"\} (\d+)/;
  const hist =
    /skillbox_call_duration_seconds_count\{kind="tool",name="add"\} (\d+)/;
  // A scrape is built at most once a second, and the host has no clock to
  // move: wait (bounded) for the first build that saw the calls, then check
  // the exact counts it shows.
  const scrapeWhen = async (ready: (text: string) => boolean) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const text = await scrape();
      if (ready(text)) return text;
      if (Date.now() > deadline) assert.fail(`no new scrape:\n${text}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const before = await scrape();
  await host.callTool("add", { a: 1, b: 1 });
  const once = await scrapeWhen((text) =>
    count(text, okAdd) !== count(before, okAdd)
  );
  assert.equal(count(once, okAdd), count(before, okAdd) + 1);
  assert.equal(count(once, hist), count(before, hist) + 1);
  await host.callTool("fail", {});
  await host.callTool("add", { a: 2, b: 2 });
  const twice = await scrapeWhen((text) =>
    count(text, okAdd) !== count(once, okAdd)
  );
  assert.equal(count(twice, okAdd), count(before, okAdd) + 2);
  assert.equal(count(twice, failed), count(before, failed) + 1);
  for (
    const name of [
      "skillbox_sessions",
      "skillbox_sandbox_processes",
      "skillbox_sandbox_rss_bytes",
      "skillbox_llm_tokens_total",
      "skillbox_llm_turns_total",
      "skillbox_events_dropped_total",
      "skillbox_store_errors_total",
      "process_cpu_user_seconds_total",
    ]
  ) {
    assert.match(twice, new RegExp(`# TYPE ${name} `), name);
  }
  assert.match(twice, /skillbox_sandbox_processes [1-9]/);
  // An unknown name never becomes its own label value.
  await host.callTool("made_up_name_123", {}).catch(() => {});
  const third = await scrapeWhen((text) => /unknown_tool/.test(text));
  assert.ok(!third.includes("made_up_name_123"));
  assert.match(third, /name="\(unknown\)",outcome="unknown_tool"\} 1/);
});

Deno.test("/api/runs filters and pages newest first; /api/stats gives p50 and p95", async () => {
  await using t = await fixtureHost();
  const { host } = t;
  for (let i = 0; i < 5; i++) await host.callTool("add", { a: i, b: 0 });
  await host.callTool("fail", {});
  const first = await getJson(host, "/api/runs?name=add&limit=2");
  const page1 = first.runs as { arguments: { a: number } }[];
  assert.deepEqual(page1.map((r) => r.arguments.a), [4, 3]);
  const second = await getJson(
    host,
    `/api/runs?name=add&limit=2&before=${first.next}`,
  );
  assert.deepEqual(
    (second.runs as { arguments: { a: number } }[]).map((r) => r.arguments.a),
    [2, 1],
  );
  const errors = (await getJson(host, "/api/runs?outcome=error")).runs as {
    name: string;
  }[];
  assert.deepEqual(errors.map((r) => r.name), ["fail"]);
  const bad = await get(host, "/api/runs?limit=abc");
  assert.equal(bad.status, 400);
  await bad.body?.cancel();
  const stats = (await getJson(host, "/api/stats")).stats as Record<
    string,
    unknown
  >[];
  const add = stats.find((s) => s.name === "add")!;
  assert.equal(add.calls, 5);
  assert.equal(add.errors, 0);
  assert.ok(Number(add.p95_ms) >= Number(add.p50_ms) && Number(add.p50_ms) > 0);
  assert.equal((add.recent_ms as number[]).length, 5);
  const missing = await get(host, "/api/runs/nope");
  assert.equal(missing.status, 404);
  await missing.body?.cancel();
});

Deno.test("/api/catalog lists tools by toolkit and skills, and searches with the tool index", async () => {
  await using t = await fixtureHost();
  const catalog = await getJson(t.host, "/api/catalog");
  const tools = catalog.tools as { name: string; toolkit: string | null }[];
  assert.ok(tools.some((x) => x.name === "add" && x.toolkit === null));
  assert.ok(tools.some((x) => x.name === "leak" && x.toolkit === "vault"));
  assert.deepEqual(
    (catalog.toolkits as { name: string }[]).map((k) => k.name),
    ["vault"],
  );
  const skills = catalog.skills as { name: string; status: string }[];
  assert.deepEqual(skills.map((s) => [s.name, s.status]), [[
    "steps",
    "Published",
  ]]);
  const found = await getJson(t.host, "/api/catalog?q=heap");
  assert.equal((found.matches as string[])[0], "oom");
});

Deno.test("/api/live streams a run starting, its events and its end", async () => {
  await using t = await fixtureHost();
  const { host } = t;
  const abort = new AbortController();
  const res = await get(host, "/api/live", { signal: abort.signal });
  assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const until = async (pattern: RegExp) => {
    const end = Date.now() + 10_000;
    while (!pattern.test(text)) {
      if (Date.now() > end) throw new Error(`no ${pattern} in ${text}`);
      const { value, done } = await reader.read();
      if (done) throw new Error("stream ended");
      text += value;
    }
  };
  await until(/event: hello/);
  const call = host.callTool("add", { a: 1, b: 2 });
  await until(/event: started\ndata: \{[^\n]*"name":"add"/);
  await until(/event: event\ndata: [^\n]*"kind":"progress"/);
  await until(/event: finished\ndata: [^\n]*"outcome":"ok"/);
  await call;
  abort.abort();
  await reader.cancel().catch(() => {});
});

Deno.test("with tokens and no admin token, no token sees the operator's runs, and the host says how to get the full view", async () => {
  const lines: string[] = [];
  await using t = await fixtureHost({
    tokens: [TOKEN, "console-test-token-2"],
    log: (line) => lines.push(line),
  });
  assert.ok(
    lines.some((l) => l.includes('no "console.admin_tokens"')),
    lines.join("\n"),
  );
  const done = await t.host.callTool("echo", { said: "operator-only-7c1e" });
  assert.equal(done.success, true);
  const auth = { authorization: `Bearer ${TOKEN}` };
  const runs = await getJson(t.host, "/api/runs", auth);
  assert.deepEqual(runs.runs, []);
  const stats = await getJson(t.host, "/api/stats", auth);
  assert.deepEqual(stats.stats, []);
  const overview = await getJson(t.host, "/api/overview", auth);
  assert.equal(overview.scope, "own");
  assert.deepEqual(overview.processes, []);
});

Deno.test("an admin token sees the operator's runs and the sandbox processes", async () => {
  const lines: string[] = [];
  await using t = await fixtureHost({
    tokens: ["console-test-token-2", TOKEN],
    adminTokens: [TOKEN],
    log: (line) => lines.push(line),
  });
  assert.ok(!lines.some((l) => l.includes("admin_tokens")), lines.join("\n"));
  await t.host.callTool("echo", { said: "operator-only-7c1e" });
  const auth = { authorization: `Bearer ${TOKEN}` };
  const runs = await getJson(t.host, "/api/runs", auth);
  assert.match(JSON.stringify(runs), /operator-only-7c1e/);
  const overview = await getJson(t.host, "/api/overview", auth);
  assert.equal(overview.scope, "all");
  assert.ok((overview.processes as unknown[]).length > 0);
  const other = await getJson(t.host, "/api/runs", {
    authorization: "Bearer console-test-token-2",
  });
  assert.deepEqual(other.runs, []);
});

// `policy.tools.tokens` hides tools from one token's sessions: `tool/list`
// never lists them. The console's catalog was the operator's list for
// every token, so that token read their names, descriptions and tags
// there, and found them by search.
Deno.test("/api/catalog lists a token only the tools its policy lets its sessions list", async () => {
  const ADMIN = "console-admin-token-9";
  const dir = await Deno.makeTempDir({ prefix: "skillbox_console_" });
  await Deno.mkdir(join(dir, "skills"));
  for (const [name, source] of Object.entries(FIXTURES)) {
    await Deno.writeTextFile(join(dir, "skills", name), source);
  }
  const host = createHost({
    config: {
      skills: [join(dir, "skills")],
      builtinSkills: false,
      tokens: [ADMIN, TOKEN],
      console: { adminTokens: [ADMIN] },
      sandbox: { ...defaultConfig().sandbox, cacheDir: null },
      store: null,
      policy: {
        tools: { tokens: { [TOKEN]: { deny: ["oom", "toolkit:vault"] } } },
      },
    },
  });
  try {
    await host.ready;
    const as = (token: string, path: string) =>
      getJson(host, path, { authorization: `Bearer ${token}` });
    const names = (c: Record<string, unknown>) =>
      (c.tools as { name: string }[]).map((t) => t.name);
    const mine = await as(TOKEN, "/api/catalog");
    assert.ok(names(mine).includes("add"), `${names(mine)}`);
    assert.deepEqual(
      names(mine).filter((n) => n === "oom" || n === "leak"),
      [],
    );
    const found = await as(TOKEN, "/api/catalog?q=heap");
    assert.ok(!(found.matches as string[]).includes("oom"));
    // The operator's view is unchanged.
    const all = await as(ADMIN, "/api/catalog");
    assert.ok(names(all).includes("oom") && names(all).includes("leak"));
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(dir, { recursive: true });
  }
});
