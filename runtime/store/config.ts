/**
 * The `store` section of `skillbox.jsonc`: where the run history is kept and
 * for how long. `"store": null` keeps nothing.
 *
 * @module
 */

import { z } from "zod";

/**
 * Where and how long the run history is kept.
 *
 * @example Read the `store` section of a config
 * ```ts
 * import { parseConfig } from "../config.ts";
 * import assert from "node:assert/strict";
 * const { store } = parseConfig('{ "store": { "max_runs": 500 } }');
 * assert.equal(store?.maxRuns, 500);
 * assert.equal(store?.maxAgeDays, 30);
 * assert.equal(store?.url, null); // SQLite, at `path`
 * assert.equal(parseConfig('{ "store": null }').store, null);
 * assert.throws(
 *   () => parseConfig('{ "store": { "url": "mysql://db/runs" } }'),
 *   /store\.url: expected a "postgres:\/\/" URL/,
 * );
 * ```
 */
export interface StoreConfig {
  /** The SQLite file, relative to the working folder. @default ".skillbox/skillbox.db" */
  path: string;
  /**
   * A PostgreSQL database (`postgres://user:password@host:5432/db`) shared
   * by a fleet of hosts; when set, `path` is not used. @default null (SQLite)
   */
  url?: string | null;
  /** Runs kept; older ones are pruned in the background. @default 10000 */
  maxRuns: number;
  /** Days a run is kept. @default 30 */
  maxAgeDays: number;
  /**
   * Caps of the files kept with a skill run (its scripts' workspaces):
   * bytes of content and files listed, per run; 0 keeps none.
   * @default { maxBytes: 4 MiB, maxFiles: 100 }
   */
  files?: { maxBytes: number; maxFiles: number };
}

// The `store` section as written in the file, each default in its field.
const StoreSection = z.strictObject({
  path: z.string().min(1).default(".skillbox/skillbox.db"),
  url: z.string().regex(/^postgres(ql)?:\/\//, {
    message: 'expected a "postgres://" URL',
  }).nullable().default(null),
  max_runs: z.number().int().positive().default(10_000),
  max_age_days: z.number().positive().default(30),
  script_files_max_bytes: z.number().int().min(0).default(4 * 1024 * 1024),
  script_files_max: z.number().int().min(0).default(100),
});

type Section = z.output<typeof StoreSection>;

/** The zod schema of the `store` section (`null` keeps nothing). */
export const StoreConfigSchema: z.ZodType<Section | null, unknown> =
  // Absent: the section's own defaults, as every other section's.
  StoreSection.nullable().prefault({});

/**
 * Converts the parsed `store` section to its TypeScript shape.
 *
 * @param section the section as parsed by {@link StoreConfigSchema}
 * @returns the config, or null when the store is off
 * @example
 * ```ts
 * import { StoreConfigSchema, toStoreConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const config = toStoreConfig(StoreConfigSchema.parse({ max_runs: 5 }));
 * assert.equal(config?.maxRuns, 5);
 * assert.equal(config?.path, ".skillbox/skillbox.db");
 * assert.deepEqual(config?.files, { maxBytes: 4194304, maxFiles: 100 });
 * assert.equal(toStoreConfig(StoreConfigSchema.parse(null)), null);
 * ```
 */
export function toStoreConfig(section: Section | null): StoreConfig | null {
  if (section === null) return null;
  return {
    path: section.path,
    url: section.url,
    maxRuns: section.max_runs,
    maxAgeDays: section.max_age_days,
    files: {
      maxBytes: section.script_files_max_bytes,
      maxFiles: section.script_files_max,
    },
  };
}

/**
 * Text that may quote a database URL (the URL itself, or an error about
 * it), with every URL's user and password hidden, up to the last "@" as
 * the PostgreSQL client and `URL` read it, whatever the password holds
 * ("/" and "?" included).
 *
 * @param text a URL or a message quoting one
 * @returns the text with `//user:password@` written `//…@`
 * @example
 * ```ts
 * import { withoutPassword } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   withoutPassword("Invalid URL: 'postgres://u:pa/ss@db:5432/runs'"),
 *   "Invalid URL: 'postgres://…@db:5432/runs'",
 * );
 * ```
 */
export function withoutPassword(text: string): string {
  return text.replace(/\/\/[^\s'"]*@/g, "//…@");
}
