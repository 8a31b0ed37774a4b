/**
 * Issue 22, item 5: a token reads only its own sessions' work in the
 * console. Tried as an attacker holding token A (which `policy.tools.tokens`
 * limits to two tools) against a real host where token B runs calls with a
 * distinctive marker in their arguments, results, status and progress: A
 * lists runs, filters and pages them by B's tool name and session id, asks
 * for B's run (finished and running) and its kept files by id, reads the
 * stats and the overview, and follows `/api/live` while B calls, with a
 * bearer header and with a login cookie. Every response's raw bytes are
 * searched for B's marker, run ids and session id. An admin token
 * (`console.admin_tokens`) sees both; `/metrics` stays aggregate.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { createHost, type Host } from "../../runtime/host.ts";
import { defaultConfig } from "../../runtime/config.ts";
import { type Client, connect } from "../../client/mod.ts";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const A = "scope-token-a-5c1d8e0f2b7a4c39";
const B = "scope-token-b-9e4f7a2d6c1b8e53";
const ADMIN = "scope-token-admin-3a7c9e1f5d2b";
const MARK = "B-MARKER-q7XkP2vL";
const FILE_MARK = "B-FILE-MARKER-Zr8w";
const A_MARK = "A-OWN-MARKER-h3Jd";

const TOOLS: Record<string, string> = {
  "add.ts":
    `export default { kind: "tool", name: "add", description: "Add two numbers",
  input: { type: "object" }, run(args) { return { sum: args.a + args.b, note: args.note }; } };`,
  "mark.ts":
    `export default { kind: "tool", name: "mark", description: "Reports and returns its marker",
  input: { type: "object" },
  run(args, ctx) { ctx.status("status " + args.m); ctx.progress(50, "progress " + args.m); return { echoed: args.m }; } };`,
  "hold.ts":
    `export default { kind: "tool", name: "hold", description: "Waits until cancelled",
  input: { type: "object" },
  run(args, ctx) { ctx.status("holding " + args.m); return new Promise(() => {}); } };`,
};

interface Served extends AsyncDisposable {
  host: Host;
  url: string;
  ws: string;
  db: string;
}

async function serve(): Promise<Served> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_scope_" });
  const skills = join(dir, "skills");
  await Deno.mkdir(skills);
  for (const [name, source] of Object.entries(TOOLS)) {
    await Deno.writeTextFile(join(skills, name), source);
  }
  const db = join(dir, "store", "runs.db");
  const base = defaultConfig();
  const host = createHost({
    config: {
      skills: [skills],
      builtinSkills: false,
      tokens: [A, B, ADMIN],
      sandbox: { ...base.sandbox, cacheDir: null },
      policy: { tools: { tokens: { [A]: { only: ["add", "mark"] } } } },
      console: { adminTokens: [ADMIN] },
      store: { path: db, maxRuns: 10_000, maxAgeDays: 30 },
    },
  });
  const report = await host.ready;
  assert.deepEqual(report.errors, []);
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  return {
    host,
    url,
    ws: url.replace("http", "ws") + "/a2e",
    db,
    async [Symbol.asyncDispose]() {
      await host.close({ timeoutSeconds: 1 });
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

// Everything the response carried, as bytes decoded.
async function raw(
  s: Served,
  path: string,
  auth: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const res = await fetch(s.url + path, { headers: auth });
  return { status: res.status, text: await res.text() };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

// Signs in through the login form; returns the cookie header.
async function login(
  s: Served,
  token: string,
): Promise<Record<string, string>> {
  const res = await fetch(s.url + "/login", {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: s.url,
    },
    body: new URLSearchParams({ token }).toString(),
  });
  await res.body?.cancel();
  assert.equal(res.status, 303);
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  assert.match(cookie, /^skillbox_console=[0-9a-f]{64}$/);
  return { cookie };
}

// An `/api/live` reader that reads until a pattern shows up.
async function follow(s: Served, auth: Record<string, string>) {
  const abort = new AbortController();
  const res = await fetch(s.url + "/api/live", {
    headers: auth,
    signal: abort.signal,
  });
  assert.equal(res.status, 200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const live = {
    text: "",
    async until(pattern: RegExp): Promise<void> {
      const end = Date.now() + 20_000;
      while (!pattern.test(live.text)) {
        if (Date.now() > end) throw new Error(`No ${pattern} in ${live.text}`);
        const { value, done } = await reader.read();
        if (done) throw new Error(`Stream ended before ${pattern}`);
        live.text += value;
      }
    },
    async close(): Promise<void> {
      abort.abort();
      await reader.cancel().catch(() => {});
    },
  };
  await live.until(/event: hello/);
  return live;
}

interface Secrets {
  /** B's finished run, its running run and B's session. */
  finished: string;
  running: string;
  session: string;
}

// Fails when a body A received carries any of B's data.
function assertNothingOfB(what: string, text: string, b: Secrets): void {
  for (const secret of [MARK, FILE_MARK, b.finished, b.running, b.session]) {
    assert.ok(
      !text.includes(secret),
      `${what} leaked "${secret}": ${text.slice(0, 2000)}`,
    );
  }
}

// B calls `mark` with the marker (finished) and `hold` (left running);
// its run has a kept file; the admin finds the ids.
async function bWorks(s: Served, b: Client): Promise<Secrets> {
  const done = await b.tools.call("mark", { m: MARK });
  assert.equal(done.success, true, JSON.stringify(done));
  const admin = await follow(s, bearer(ADMIN));
  // Left running; closing B's client ends it.
  const hold = b.tools.call("hold", { m: MARK }).catch(() => null);
  await admin.until(/event: event\ndata: [^\n]*holding B-MARKER/);
  await admin.close();
  const runs = JSON.parse(
    (await raw(s, "/api/runs?name=mark", bearer(ADMIN))).text,
  ) as { runs: { id: string; session: string }[] };
  const finished = runs.runs[0]!;
  const overview = JSON.parse(
    (await raw(s, "/api/overview", bearer(ADMIN))).text,
  ) as { running: { id: string; name: string }[] };
  const running = overview.running.find((r) => r.name === "hold")!;
  assert.ok(running, "the admin sees B's running call");
  // A file B's run kept, as a skill script's workspace leaves one.
  const db = new DatabaseSync(s.db);
  db.prepare(
    "INSERT INTO files (run_id, seq, name, size, data, note) VALUES (?, 0, ?, ?, ?, NULL)",
  ).run(
    finished.id,
    "1/out.txt",
    FILE_MARK.length,
    new TextEncoder().encode(FILE_MARK),
  );
  db.close();
  void hold;
  return {
    finished: finished.id,
    running: running.id,
    session: finished.session,
  };
}

Deno.test("a token never reads another token's runs, files, stats, sessions or live events; an admin token reads all", async (t) => {
  await using s = await serve();
  const a = await connect(s.ws, { token: A });
  const b = await connect(s.ws, { token: B });
  try {
    // A is limited to two tools: B's `hold` is not even listed for it.
    const listed = (await a.tools.list()).map((tool) => tool.name).sort();
    assert.deepEqual(listed, ["add", "mark"]);
    const own = await a.tools.call("add", { a: 1, b: 2, note: A_MARK });
    assert.equal(own.success, true);
    const secrets = await bWorks(s, b);
    assert.equal(secrets.session, b.sessionId);

    for (
      const [door, auth] of [
        ["bearer", bearer(A)],
        ["login cookie", await login(s, A)],
      ] as const
    ) {
      await t.step(`A through a ${door}`, async () => {
        const paths = [
          "/api/runs",
          "/api/runs?limit=500",
          "/api/runs?name=mark",
          "/api/runs?name=hold",
          `/api/runs?session=${secrets.session}`,
          `/api/runs?session=${secrets.session}&name=mark&kind=tool&outcome=ok`,
          "/api/runs?outcome=ok",
          "/api/runs?kind=tool&limit=1",
          `/api/runs?before=${Number.MAX_SAFE_INTEGER}`,
          "/api/stats",
          "/api/stats?window=999999",
          "/api/overview",
          "/metrics",
        ];
        for (const path of paths) {
          const res = await raw(s, path, auth);
          assert.equal(res.status, 200, `${path}: ${res.text}`);
          assertNothingOfB(path, res.text, secrets);
        }
        // Nor B's tool names, counts or timings: A never called `mark`.
        for (const path of ["/api/stats", "/api/runs?name=mark"]) {
          const res = await raw(s, path, auth);
          assert.ok(!res.text.includes('"name":"mark"'), res.text);
        }
        // A still sees its own run.
        const mine = await raw(s, "/api/runs", auth);
        assert.ok(mine.text.includes(A_MARK), mine.text);
        // Paging to the end shows nothing of B either.
        let cursor: number | null = null;
        do {
          const page: { text: string } = await raw(
            s,
            `/api/runs?limit=1${cursor === null ? "" : `&before=${cursor}`}`,
            auth,
          );
          assertNothingOfB("a page", page.text, secrets);
          cursor = (JSON.parse(page.text) as { next: number | null }).next;
        } while (cursor !== null);

        // B's runs by id answer as missing ones: 404, not 403.
        for (
          const path of [
            `/api/runs/${secrets.finished}`,
            `/api/runs/${secrets.running}`,
            `/api/runs/${secrets.finished}/files/0`,
            `/api/runs/${secrets.finished}/files/00`,
          ]
        ) {
          const res = await raw(s, path, auth);
          assert.equal(res.status, 404, `${path}: ${res.text}`);
          assert.ok(!res.text.includes(MARK) && !res.text.includes(FILE_MARK));
        }
        // The admin's answer to the same unknown-looking id is the same
        // shape as a truly unknown one.
        const unknown = await raw(s, "/api/runs/0000", auth);
        assert.equal(unknown.status, 404);
      });
    }

    await t.step(
      "A's live view carries none of B's starts, events or ends",
      async () => {
        const live = await follow(s, bearer(A));
        const cookieLive = await follow(s, await login(s, A));
        const admin = await follow(s, bearer(ADMIN));
        assertNothingOfB("hello", live.text, secrets);
        const call = await b.tools.call("mark", { m: MARK });
        assert.equal(call.success, true);
        // A's own call after B's: once A sees it end, B's would have come.
        await a.tools.call("add", { a: 2, b: 2, note: "after-b" });
        for (const view of [live, cookieLive]) {
          await view.until(/event: finished\ndata: [^\n]*after-b/);
          assert.match(view.text, /event: started\ndata: [^\n]*"name":"add"/);
          assertNothingOfB("/api/live", view.text, secrets);
          assert.ok(!view.text.includes('"name":"mark"'), view.text);
        }
        await admin.until(/event: finished\ndata: [^\n]*after-b/);
        assert.ok(admin.text.includes(`status ${MARK}`), admin.text);
        assert.ok(admin.text.includes(`progress ${MARK}`));
        assert.ok(admin.text.includes(`"echoed":"${MARK}"`));
        for (const view of [live, cookieLive, admin]) await view.close();
      },
    );

    await t.step("B does not see A's runs either", async () => {
      const res = await raw(s, "/api/runs?limit=500", bearer(B));
      assert.ok(res.text.includes(MARK));
      assert.ok(!res.text.includes(A_MARK), res.text);
    });

    await t.step(
      "the admin token, by bearer and by cookie, sees both",
      async () => {
        for (const auth of [bearer(ADMIN), await login(s, ADMIN)]) {
          const runs = await raw(s, "/api/runs?limit=500", auth);
          assert.ok(runs.text.includes(MARK) && runs.text.includes(A_MARK));
          const detail = await raw(s, `/api/runs/${secrets.finished}`, auth);
          assert.equal(detail.status, 200);
          assert.ok(detail.text.includes(MARK));
          const file = await raw(
            s,
            `/api/runs/${secrets.finished}/files/0`,
            auth,
          );
          assert.equal(file.text, FILE_MARK);
          const overview = await raw(s, "/api/overview", auth);
          assert.ok(overview.text.includes(secrets.session));
          assert.ok(overview.text.includes(secrets.running));
          const stats = await raw(s, "/api/stats", auth);
          assert.ok(stats.text.includes('"name":"mark"'));
        }
      },
    );

    await t.step(
      "B's calls over MCP are B's too: A never sees them, B does",
      async () => {
        const MCP_MARK = "B-MCP-MARKER-n4Tq";
        const mcp = new McpClient({ name: "scope-test", version: "1.0.0" });
        await mcp.connect(
          new StreamableHTTPClientTransport(new URL(s.url + "/mcp"), {
            requestInit: { headers: bearer(B) },
          }),
        );
        try {
          const result = await mcp.callTool({
            name: "mark",
            arguments: { m: MCP_MARK },
          });
          assert.ok(!result.isError, JSON.stringify(result));
        } finally {
          await mcp.close();
        }
        const asA = await raw(s, "/api/runs?limit=500", bearer(A));
        assert.ok(!asA.text.includes(MCP_MARK), asA.text);
        const asB = await raw(s, "/api/runs?limit=500", bearer(B));
        assert.ok(asB.text.includes(MCP_MARK), asB.text);
        const asAdmin = await raw(s, "/api/runs?limit=500", bearer(ADMIN));
        assert.ok(asAdmin.text.includes(MCP_MARK));
      },
    );

    await t.step(
      "the operator's in-process calls are shown to admins only",
      async () => {
        const op = await s.host.callTool("add", {
          a: 5,
          b: 5,
          note: "OP-MARK",
        });
        assert.equal(op.success, true);
        const asA = await raw(s, "/api/runs?limit=500", bearer(A));
        assert.ok(!asA.text.includes("OP-MARK"), asA.text);
        const asAdmin = await raw(s, "/api/runs?limit=500", bearer(ADMIN));
        assert.ok(asAdmin.text.includes("OP-MARK"));
      },
    );
  } finally {
    await a.close();
    await b.close();
  }
});
