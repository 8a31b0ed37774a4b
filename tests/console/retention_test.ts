/**
 * The run history's retention end to end, tried as a token that floods the
 * store: a real host with two tokens and a small `store.max_runs`, calls
 * over WebSocket. One token's calls prune only its own history, never the
 * other token's runs within their share.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { connect } from "../../client/mod.ts";
import {
  fixtureHost,
  type FixtureHostOptions,
  getJson,
} from "../support/console_host.ts";
import { testWithPostgres } from "../support/postgres.ts";

type StoreSection = NonNullable<FixtureHostOptions["store"]>;

const A = "retention-token-a-7d2e9c4b1f";
const B = "retention-token-b-3f8a6e0c5d";
// B's 3 runs are within its share of 10 (half, with A the only other).
const MAX_RUNS = 10;

// Two tokens' sessions call over WebSocket: B a few times, then A many
// times max_runs.
async function flood(store: (dir: string) => Promise<StoreSection>) {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_retention_" });
  await using t = await fixtureHost({
    dir,
    tokens: [A, B],
    adminTokens: [A],
    store: await store(dir),
  });
  const { url } = await t.host.listen({ hostname: "127.0.0.1", port: 0 });
  const ws = url.replace("http", "ws") + "/a2e";
  const runsOf = async (token: string) =>
    (await getJson(t.host, "/api/runs?limit=500", {
      authorization: `Bearer ${token}`,
    })).runs as { id: string; owner?: string; name: string }[];
  try {
    const b = await connect(ws, { token: B });
    for (let i = 0; i < 3; i++) await b.tools.call("add", { a: i, b: 0 });
    await b.close();
    assert.equal((await runsOf(B)).length, 3);
    const a = await connect(ws, { token: A });
    for (let i = 0; i < MAX_RUNS * 6; i++) {
      await a.tools.call("add", { a: i, b: 1 });
    }
    await a.close();
    // Reading the runs writes what is pending, and prunes once max_runs
    // were written since the last prune.
    const bRuns = await runsOf(B);
    assert.equal(bRuns.length, 3, JSON.stringify(bRuns));
    // A (an admin: it sees every run) was pruned, to within twice
    // max_runs in all (a prune runs every max_runs runs written).
    const all = await runsOf(A);
    assert.ok(all.length <= 2 * MAX_RUNS, `${all.length} runs kept`);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

Deno.test("a token calling many times max_runs prunes its own runs, never the other token's few (SQLite)", async () => {
  await flood((dir) =>
    Promise.resolve({
      path: join(dir, "store", "runs.db"),
      maxRuns: MAX_RUNS,
      maxAgeDays: 30,
    })
  );
});

testWithPostgres(
  "a token calling many times max_runs prunes its own runs, never the other token's few (PostgreSQL)",
  async (pg) => {
    const url = await pg.database();
    await flood(() =>
      Promise.resolve({
        path: "unused.db",
        url,
        maxRuns: MAX_RUNS,
        maxAgeDays: 30,
      })
    );
  },
);
