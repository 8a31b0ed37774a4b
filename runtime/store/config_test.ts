import assert from "node:assert/strict";
import { StoreConfigSchema, toStoreConfig } from "./config.ts";

const DEFAULTS = {
  path: ".skillbox/skillbox.db",
  url: null,
  max_runs: 10_000,
  max_age_days: 30,
  script_files_max_bytes: 4 * 1024 * 1024,
  script_files_max: 100,
};

Deno.test("StoreConfigSchema gives an absent store section every default", () => {
  assert.deepEqual(StoreConfigSchema.parse(undefined), DEFAULTS);
  assert.deepEqual(StoreConfigSchema.parse({}), DEFAULTS);
  assert.deepEqual(toStoreConfig(StoreConfigSchema.parse(undefined)), {
    path: ".skillbox/skillbox.db",
    url: null,
    maxRuns: 10_000,
    maxAgeDays: 30,
    files: { maxBytes: 4 * 1024 * 1024, maxFiles: 100 },
  });
});

Deno.test("StoreConfigSchema keeps the fields given and null as no store", () => {
  assert.deepEqual(StoreConfigSchema.parse({ max_runs: 5 }), {
    ...DEFAULTS,
    max_runs: 5,
  });
  assert.equal(StoreConfigSchema.parse(null), null);
  assert.throws(() => StoreConfigSchema.parse({ max_runs: 0 }));
  assert.throws(() => StoreConfigSchema.parse({ colour: "red" }));
});
