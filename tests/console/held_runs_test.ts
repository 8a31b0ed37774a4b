/**
 * The runs a host holds while its database is down, tried as a token that
 * floods calls meanwhile: a real host on PostgreSQL with two tokens, calls
 * over WebSocket, the database stopped. Past the host's bound (64 MiB of
 * held runs) the flooding token loses its own oldest runs, never the other
 * token's few, which are in the history once the database is back.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { connect } from "../../client/mod.ts";
import { fixtureHost, getJson } from "../support/console_host.ts";
import { testWithPostgres } from "../support/postgres.ts";

const A = "held-runs-token-a-5c1e8f2a9d";
const B = "held-runs-token-b-0b7d4a6e3c";

// 500 events of 4,000 characters: the history keeps each event's first
// 2,000 or so, about 2 MiB a run held (UTF-16).
const CHATTY = `export default { kind: "tool", name: "chatty",
  description: "Logs 500 long lines", input: { type: "object" },
  run(_a, ctx) {
    const line = "x".repeat(4000);
    for (let i = 0; i < 500; i++) ctx.log("info", line);
    return { lines: 500 };
  } };`;
// Twice what fills the 64 MiB bound.
const FLOOD = 64;

testWithPostgres(
  "a token flooding calls while the database is down loses its own held runs, never the other token's",
  async (pg) => {
    const url = await pg.database();
    const dir = await Deno.makeTempDir({ prefix: "skillbox_held_" });
    await Deno.mkdir(join(dir, "skills"), { recursive: true });
    await Deno.writeTextFile(join(dir, "skills", "chatty.ts"), CHATTY);
    const lines: string[] = [];
    await using t = await fixtureHost({
      dir,
      tokens: [A, B],
      adminTokens: [A],
      store: { path: "unused.db", url, maxRuns: 10_000, maxAgeDays: 30 },
      log: (line) => lines.push(line),
    });
    const { url: base } = await t.host.listen({
      hostname: "127.0.0.1",
      port: 0,
    });
    const ws = base.replace("http", "ws") + "/a2e";
    const runsOf = async (token: string) =>
      (await getJson(t.host, "/api/runs?limit=500", {
        authorization: `Bearer ${token}`,
      })).runs as { id: string; name: string }[];
    try {
      // The store answered once: the host is past its start.
      assert.equal((await runsOf(B)).length, 0);
      await pg.stop();
      const b = await connect(ws, { token: B });
      for (let i = 0; i < 3; i++) await b.tools.call("add", { a: i, b: 0 });
      await b.close();
      const a = await connect(ws, { token: A });
      for (let i = 0; i < FLOOD; i++) await a.tools.call("chatty", {});
      await a.close();
      await pg.start();
      // Reading the history writes what is held first.
      const bRuns = await runsOf(B);
      assert.deepEqual(bRuns.map((r) => r.name), ["add", "add", "add"]);
      const chatty = (await runsOf(A)).filter((r) => r.name === "chatty");
      assert.ok(
        chatty.length > 0 && chatty.length < FLOOD,
        `${chatty.length} of A's ${FLOOD} runs kept`,
      );
      // Counted, in the log line too (a run's `running` write held and
      // lost counts as well).
      const back = lines.find((l) => /written again/.test(l)) ?? "";
      const lost = Number(/(\d+) runs were lost/.exec(back)?.[1]);
      assert.ok(lost >= FLOOD - chatty.length, back);
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
);
