/**
 * The bounds of one streamed turn: the bytes of text and tool calls a
 * provider sends are counted as they arrive, and the turn fails the moment
 * it passes `llm.max_response_bytes` or `llm.max_tool_calls`, so a hostile
 * or broken endpoint cannot grow the host's memory.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";

/** The two limits of a turn. */
export interface TurnLimits {
  /** Most UTF-8 bytes of text plus tool-call ids, names and arguments. */
  maxResponseBytes: number;
  /** Most tool calls. */
  maxToolCalls: number;
}

/**
 * Counts one turn against its limits.
 *
 * @example Text past the limit fails the turn
 * ```ts
 * import { TurnBounds } from "./turn_bounds.ts";
 * import assert from "node:assert/strict";
 * const bounds = new TurnBounds("openai", { maxResponseBytes: 4, maxToolCalls: 1 });
 * bounds.add("abcd");
 * assert.throws(() => bounds.add("é"), /more than 4 bytes/);
 * ```
 */
export class TurnBounds {
  readonly #provider: string;
  readonly #limits: TurnLimits;
  #bytes = 0;
  #calls = 0;

  /**
   * Starts a turn's count at zero.
   *
   * @param provider named in the error
   * @param limits the turn's limits
   */
  constructor(provider: string, limits: TurnLimits) {
    this.#provider = provider;
    this.#limits = limits;
  }

  /**
   * Counts a piece of text, a tool call's id, name or arguments.
   *
   * @param text the piece as it arrived
   * @throws {SkillboxError} `skill_error` past `maxResponseBytes`
   */
  add(text: string): void {
    this.#bytes += utf8Length(text);
    if (this.#bytes <= this.#limits.maxResponseBytes) return;
    const limit = this.#limits.maxResponseBytes;
    throw new SkillboxError(
      "skill_error",
      `LLM provider "${this.#provider}" sent more than ${limit} bytes of text and tool calls in one turn: the limit is llm.max_response_bytes (${limit})`,
      { detail: { provider: this.#provider, limit: "max_response_bytes" } },
    );
  }

  /**
   * Counts one new tool call.
   *
   * @throws {SkillboxError} `skill_error` past `maxToolCalls`
   */
  call(): void {
    this.#calls++;
    if (this.#calls <= this.#limits.maxToolCalls) return;
    const limit = this.#limits.maxToolCalls;
    throw new SkillboxError(
      "skill_error",
      `LLM provider "${this.#provider}" made more than ${limit} tool calls in one turn: the limit is llm.max_tool_calls (${limit})`,
      { detail: { provider: this.#provider, limit: "max_tool_calls" } },
    );
  }
}

// UTF-8 length without encoding: the text may be large.
function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4; // a surrogate pair is one 4-byte character
      i++;
    } else n += 3;
  }
  return n;
}
