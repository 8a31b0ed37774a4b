/**
 * The operator's rules for LLM calls (`llm` in `skillbox.jsonc` written as
 * an object): how much one turn may bring back, how many tool calls it may
 * make, and which hosts an endpoint chosen by a client or a skill may name.
 *
 * ```jsonc
 * "llm": {
 *   "providers": [ ... ],            // the entries; the array form of "llm" is shorthand for this
 *   "max_response_bytes": 1048576,   // text + tool-call arguments of one turn
 *   "max_tool_calls": 64,            // tool calls of one turn
 *   "allowed_hosts": []              // hosts a chosen base_url may name ("name", "name:port", "*")
 * }
 * ```
 *
 * @module
 */

import { z } from "zod";

/** The rules; every field has a default ({@link DEFAULT_LLM_RULES}). */
export interface LlmRules {
  /**
   * Most UTF-8 bytes of streamed text plus tool-call ids, names and
   * arguments one turn may bring back. @default 1048576
   */
  maxResponseBytes: number;
  /** Most tool calls one turn may make. @default 64 */
  maxToolCalls: number;
  /**
   * Hosts (`name`, `name:port`, `*`) a `base_url` chosen by a call
   * (`llm_override`) or a skill (`llm:`, `llm_config`) may name; the
   * operator's own entries need none of this. @default []
   */
  allowedHosts: string[];
}

/**
 * The defaults: 1 MiB a turn (about four times the longest answer a model
 * with a 64k-token output limit writes, and a quarter of an A2E message),
 * 64 tool calls a turn (models make a handful in parallel), and no chosen
 * endpoint allowed.
 *
 * @example
 * ```ts
 * import { DEFAULT_LLM_RULES } from "./rules.ts";
 * import assert from "node:assert/strict";
 * assert.equal(DEFAULT_LLM_RULES.maxToolCalls, 64);
 * ```
 */
export const DEFAULT_LLM_RULES: Readonly<LlmRules> = Object.freeze({
  maxResponseBytes: 1024 * 1024,
  maxToolCalls: 64,
  allowedHosts: [],
});

/**
 * The zod schema of `llm` in `skillbox.jsonc`: the providers array, or an
 * object with the providers and the rules (snake_case).
 *
 * @example
 * ```ts
 * import { LLM_SECTION } from "./rules.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(LLM_SECTION.parse(undefined), []);
 * assert.equal(LLM_SECTION.safeParse({ max_tool_calls: 0 }).success, false);
 * ```
 */
export const LLM_SECTION = z.union([
  z.array(z.unknown()),
  z.strictObject({
    providers: z.array(z.unknown()).default([]),
    max_response_bytes: z.number().int().min(1024).default(
      DEFAULT_LLM_RULES.maxResponseBytes,
    ),
    max_tool_calls: z.number().int().min(1).default(
      DEFAULT_LLM_RULES.maxToolCalls,
    ),
    allowed_hosts: z.array(z.string().min(1)).default([]),
  }),
]).default([]);

/**
 * Reads a parsed `llm` section: its provider entries (still to be checked),
 * the field path they sit at, and the rules (defaults for the array form).
 *
 * @param section what {@link LLM_SECTION} parsed
 * @returns the entries, their path and the rules
 * @example The array form is shorthand for `{providers: [...]}`
 * ```ts
 * import { LLM_SECTION, readLlmSection } from "./rules.ts";
 * import assert from "node:assert/strict";
 * const short = readLlmSection(LLM_SECTION.parse([{ provider_name: "openai" }]));
 * assert.equal(short.path, "llm");
 * assert.equal(short.rules.maxToolCalls, 64);
 * const full = readLlmSection(LLM_SECTION.parse({ providers: [], max_tool_calls: 4 }));
 * assert.equal(full.path, "llm.providers");
 * assert.equal(full.rules.maxToolCalls, 4);
 * ```
 */
export function readLlmSection(
  section: z.infer<typeof LLM_SECTION>,
): { entries: unknown[]; path: string; rules: LlmRules } {
  if (Array.isArray(section)) {
    return {
      entries: section,
      path: "llm",
      rules: { ...DEFAULT_LLM_RULES, allowedHosts: [] },
    };
  }
  return {
    entries: section.providers,
    path: "llm.providers",
    rules: {
      maxResponseBytes: section.max_response_bytes,
      maxToolCalls: section.max_tool_calls,
      allowedHosts: section.allowed_hosts,
    },
  };
}
