import assert from "node:assert/strict";
import { parseConfig } from "../config.ts";
import { resolveConfig } from "../config_overrides.ts";
import { openRecorder } from "./open.ts";
import { PostgresRunStore } from "./postgres.ts";
import { SqliteRunStore } from "./sqlite.ts";

Deno.test("store.url selects the PostgreSQL store; without it SQLite stays the default", async () => {
  const sqlite = parseConfig(`{ "store": { "path": ":memory:" } }`);
  assert.equal(sqlite.store?.url, null);
  assert.equal(sqlite.host?.id, null);
  const a = openRecorder(sqlite.store);
  assert.ok(a.store instanceof SqliteRunStore);
  await a.close();
  const pg = parseConfig(
    `{ "store": { "url": "postgres://u:p@127.0.0.1:1/db" }, "host": { "id": "h7" } }`,
  );
  assert.equal(pg.host?.id, "h7");
  // Connected on first use: a host starts while its database is down.
  const b = openRecorder(pg.store, { host: "h7" });
  assert.ok(b.store instanceof PostgresRunStore);
  await b.close();
});

Deno.test("SKILLBOX_STORE_URL sets store.url, even over store: null", () => {
  const off = parseConfig(`{ "store": null }`);
  const { config, overrides } = resolveConfig(off, {
    env: { SKILLBOX_STORE_URL: "postgres://db/skillbox" },
  });
  assert.equal(config.store?.url, "postgres://db/skillbox");
  assert.equal(config.store?.maxRuns, 10_000);
  assert.equal(overrides["store.url"], "SKILLBOX_STORE_URL");
});

Deno.test("a store.url that is not postgres:// is refused at load", () => {
  assert.throws(
    () => parseConfig(`{ "store": { "url": "mysql://db/x" } }`),
    /store\.url/,
  );
});
