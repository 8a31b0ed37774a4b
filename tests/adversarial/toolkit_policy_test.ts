/**
 * A token that `policy.tools.tokens` keeps away from a toolkit learns
 * nothing of it: tried as an attacker holding token A, for whom
 * `toolkit:ops` is denied, against a real host with an `ops` toolkit. A's
 * `toolkit/list` (raw bytes over the WebSocket), its `toolkit/configure`
 * of `ops` and its console catalog must not name the toolkit or its
 * tool, and configuring it must answer as for a toolkit that does not
 * exist. Token B, with no rules, sees and configures it.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost, type Host } from "../../runtime/host.ts";
import { defaultConfig } from "../../runtime/config.ts";
import { openWs, type RawWs } from "../support/ws_client.ts";

const A = "kit-policy-token-a-7d2e9c41";
const B = "kit-policy-token-b-3f8a6b05";
const C = "kit-policy-token-c-c60e2d17";
const ADMIN = "kit-policy-token-admin-51c0";

const FILES: Record<string, string> = {
  "add.ts":
    `export default { kind: "tool", name: "add", description: "Add two numbers",
  input: { type: "object" }, run(args) { return { sum: args.a + args.b }; } };`,
  "ops/toolkit.ts":
    `export default { kind: "toolkit", name: "ops", description: "Operations only admins run",
  config: { type: "object", properties: { cluster: { type: "string" } } } };`,
  "ops/wipe_cluster.ts":
    `export default { kind: "tool", name: "wipe_cluster", toolkit: "ops", description: "Wipes it",
  input: { type: "object" }, run() { return { wiped: true }; } };`,
  "ops/cluster_health.ts":
    `export default { kind: "tool", name: "cluster_health", toolkit: "ops", description: "Reads it",
  input: { type: "object" }, run() { return { ok: true }; } };`,
};

async function serve(): Promise<
  { host: Host; url: string; close(): Promise<void> }
> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_kit_policy_" });
  const skills = join(dir, "skills");
  for (const [name, source] of Object.entries(FILES)) {
    await Deno.mkdir(join(skills, name, ".."), { recursive: true });
    await Deno.writeTextFile(join(skills, name), source);
  }
  const base = defaultConfig();
  const host = createHost({
    config: {
      skills: [skills],
      builtinSkills: false,
      tokens: [A, B, C, ADMIN],
      sandbox: { ...base.sandbox, cacheDir: null },
      policy: {
        tools: {
          tokens: {
            [A]: { deny: ["toolkit:ops"] },
            [C]: { deny: ["wipe_cluster"] },
          },
        },
      },
      console: { adminTokens: [ADMIN] },
      store: { path: join(dir, "runs.db"), maxRuns: 100, maxAgeDays: 1 },
    },
  });
  const report = await host.ready;
  assert.deepEqual(report.errors, []);
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  return {
    host,
    url,
    async close() {
      await host.close({ timeoutSeconds: 1 });
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

let ids = 0;
// Sends one request and returns the raw text of its answer.
async function ask(
  ws: RawWs,
  fields: Record<string, unknown>,
): Promise<string> {
  const id = `r${++ids}`;
  ws.send(
    JSON.stringify({ id, version: "1.0", ts: Date.now() / 1000, ...fields }),
  );
  for (;;) {
    const msg = await ws.next(10_000);
    if (msg.req_id === id) return JSON.stringify(msg);
  }
}

async function session(url: string, token: string): Promise<RawWs> {
  const ws = await openWs(url.replace("http", "ws") + "/a2e");
  const hello = JSON.parse(
    await ask(ws, {
      type: "handshake/req",
      agent_caps: ["tools", "toolkits"],
      auth_token: token,
    }),
  );
  assert.equal(hello.type, "handshake/resp", JSON.stringify(hello));
  return ws;
}

Deno.test("a token denied a toolkit neither lists nor configures it", async (t) => {
  const s = await serve();
  const a = await session(s.url, A);
  const b = await session(s.url, B);
  try {
    await t.step(
      "A's toolkit/list names neither the toolkit nor its tool",
      async () => {
        const text = await ask(a, { type: "toolkit/list/req" });
        assert.match(text, /toolkit\/list\/resp/);
        assert.doesNotMatch(text, /ops|wipe_cluster/, text);
      },
    );

    await t.step(
      "A configuring it is told what an unknown toolkit is told",
      async () => {
        const denied = JSON.parse(
          await ask(a, {
            type: "toolkit/configure/req",
            toolkit_name: "ops",
            config: { cluster: "prod" },
          }),
        );
        const unknown = JSON.parse(
          await ask(a, {
            type: "toolkit/configure/req",
            toolkit_name: "nope",
            config: {},
          }),
        );
        assert.equal(denied.status, "error");
        assert.equal(
          denied.message,
          String(unknown.message).replace('"nope"', '"ops"'),
        );
      },
    );

    await t.step("A's console catalog names neither", async () => {
      const res = await fetch(s.url + "/api/catalog", {
        headers: { authorization: `Bearer ${A}` },
      });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.match(text, /"add"/);
      assert.doesNotMatch(text, /ops|wipe_cluster|cluster_health/, text);
    });

    await t.step(
      "C, denied one tool of it, sees the toolkit without that tool",
      async () => {
        const c = await session(s.url, C);
        try {
          const text = await ask(c, { type: "toolkit/list/req" });
          assert.match(text, /"name":"ops"/);
          assert.match(text, /"tools":\["cluster_health"\]/);
          assert.doesNotMatch(text, /wipe_cluster/, text);
        } finally {
          await c.close();
        }
        const res = await fetch(s.url + "/api/catalog", {
          headers: { authorization: `Bearer ${C}` },
        });
        const text = await res.text();
        assert.match(text, /"tools":\["cluster_health"\]/);
        assert.doesNotMatch(text, /wipe_cluster/, text);
      },
    );

    await t.step("B, with no rules, lists and configures it", async () => {
      const list = await ask(b, { type: "toolkit/list/req" });
      assert.match(list, /"name":"ops"/);
      assert.match(list, /wipe_cluster/);
      const done = JSON.parse(
        await ask(b, {
          type: "toolkit/configure/req",
          toolkit_name: "ops",
          config: { cluster: "prod" },
        }),
      );
      assert.equal(done.status, "ok", JSON.stringify(done));
      const res = await fetch(s.url + "/api/catalog", {
        headers: { authorization: `Bearer ${B}` },
      });
      assert.match(await res.text(), /wipe_cluster/);
    });

    await t.step(
      "an admin's console catalog shows the operator's whole list",
      async () => {
        const res = await fetch(s.url + "/api/catalog", {
          headers: { authorization: `Bearer ${ADMIN}` },
        });
        const text = await res.text();
        assert.match(text, /"name":"ops"/);
        assert.match(text, /wipe_cluster/);
      },
    );
  } finally {
    await a.close();
    await b.close();
    await s.close();
  }
});
