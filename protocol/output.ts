/**
 * The marked output a tool's or skill's `run` may return to set result
 * fields besides `data`: built by {@link output} in the sandbox (the author
 * SDK re-exports it) and recognised by {@link isOutput} in the host, so the
 * marker has one definition on both sides.
 *
 * @module
 */

/**
 * What `run` may return instead of plain data, to set the other result
 * fields. Build it with {@link output}.
 *
 * @example Return a summary beside the data
 * ```ts
 * import { isOutput, type Output, output } from "./output.ts";
 * import assert from "node:assert/strict";
 * const run = (rows: string[]): Output => output({ data: rows, summary: `${rows.length} rows`, exit_code: 0 });
 * // What `run` returned reaches the host as a copy, and is still recognised.
 * const returned: unknown = structuredClone(run(["a", "b"]));
 * assert.ok(isOutput(returned));
 * assert.equal(returned.summary, "2 rows");
 * ```
 */
export interface Output {
  /** Marks the object as an {@link Output}; set by {@link output}. */
  readonly __skillbox_output: true;
  /** The result's `data`. @default null */
  data?: unknown;
  /** The result's `summary`: a short form of `data` for models. @default null */
  summary?: unknown;
  /** The result's `exit_code` (tools only). @default null */
  exit_code?: number | null;
  /** Ends the agent loop with this result as the skill's answer. */
  break_loop?: boolean;
}

/**
 * Wraps a return value with extra result fields.
 *
 * @param fields data plus `summary`, `exit_code`, `break_loop`
 * @returns the marked output
 * @example Return an exit code
 * ```ts
 * import { output } from "./output.ts";
 * import assert from "node:assert/strict";
 * const out = output({ data: "hi", exit_code: 0 });
 * assert.equal(out.__skillbox_output, true);
 * ```
 */
export function output(fields: Omit<Output, "__skillbox_output">): Output {
  return { __skillbox_output: true, ...fields };
}

/**
 * Tells whether a value returned by `run` is an {@link Output}. Works across
 * realms (it checks the marker, not the prototype).
 *
 * @param value what `run` returned
 * @returns true for a value built by {@link output}
 * @example
 * ```ts
 * import { isOutput, output } from "./output.ts";
 * import assert from "node:assert/strict";
 * assert.ok(isOutput(output({ data: 1 })));
 * assert.ok(!isOutput({ data: 1 }));
 * ```
 */
export function isOutput(value: unknown): value is Output {
  return typeof value === "object" && value !== null &&
    (value as Record<string, unknown>).__skillbox_output === true;
}
