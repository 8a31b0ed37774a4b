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
