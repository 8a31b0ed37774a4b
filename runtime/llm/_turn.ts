/**
 * What every provider's streamed turn shares: the bounds it is counted
 * against (bytes and tool calls, so a server cannot flood the host), and
 * the errors it fails with, mapped from each SDK's failures in one place so
 * both providers report the same way: provider name, HTTP status, the
 * provider's own message, and whether a retry may help.
 *
 * @module
 */

import type { ChatToolCall } from "../../protocol/chat.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import { isPlainObject } from "../../protocol/json.ts";
import { DEFAULT_LLM_RULES, type LlmRules, redactUrl } from "./config.ts";

/** The two limits of a turn: the operator's `llm` rules for them. */
export type TurnLimits = Pick<LlmRules, "maxResponseBytes" | "maxToolCalls">;

/**
 * Counts one turn against its limits.
 *
 * @example Text past the limit fails the turn
 * ```ts
 * import { TurnBounds } from "./_turn.ts";
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
   * @param limits the turn's limits @default {@link DEFAULT_LLM_RULES}'s
   */
  constructor(provider: string, limits: TurnLimits = DEFAULT_LLM_RULES) {
    this.#provider = provider;
    this.#limits = limits;
  }

  /**
   * Counts a piece of text, a tool call's id, name or arguments.
   *
   * @param piece the piece as it arrived: typed a string, but the SDKs pass
   *   the server's JSON through unchecked, and a number or an object is
   *   appended as its string form, so that is what is counted
   * @throws {SkillboxError} `skill_error` past `maxResponseBytes`
   */
  add(piece: unknown): void {
    this.#bytes += utf8Length(String(piece));
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

/** Error types a provider sends mid-stream that a retry may clear. */
const RETRYABLE_TYPES = new Set([
  "overloaded_error",
  "api_error",
  "server_error",
  "rate_limit_error",
  "rate_limit_exceeded",
]);

/** What a provider module read from its SDK's own HTTP error class. */
export interface ApiErrorFields {
  /** HTTP status; absent when no answer came (connection failure). */
  status?: number;
  /** The provider's message from the error body. */
  message?: string;
  /** The provider's error type (`rate_limit_error`). */
  type?: string;
  /** Whether the error carried a body at all (none: a connection failure). */
  hasBody: boolean;
}

/**
 * Maps anything a provider SDK threw to the error the skill sees, the same
 * way for every provider: a {@link SkillboxError} passes through, the SDK's
 * HTTP error (recognized by `readApiError`) keeps its status, message and
 * type, and anything else becomes a provider failure with its message.
 *
 * @param provider `openai` or `anthropic`
 * @param error what the SDK threw
 * @param options `baseUrl` (named for connection failures) and the
 *   provider's reader of its SDK error class (undefined when not one)
 * @returns the error to throw
 * @example A non-SDK failure becomes a provider error
 * ```ts
 * import { mapProviderError } from "./_turn.ts";
 * import assert from "node:assert/strict";
 * const error = mapProviderError("openai", new Error("boom"), {
 *   baseUrl: "https://api.openai.com/v1",
 *   readApiError: () => undefined,
 * });
 * assert.equal(error.message, 'LLM provider "openai" failed mid-stream: boom');
 * ```
 */
export function mapProviderError(
  provider: string,
  error: unknown,
  options: {
    baseUrl: string;
    readApiError: (error: unknown) => ApiErrorFields | undefined;
  },
): Error {
  if (error instanceof SkillboxError) return error;
  // Our own fetch's refusals and bounds, wrapped by the SDK as a
  // connection or stream error: their message is the clear one.
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof SkillboxError) return cause;
  const api = error instanceof Error ? options.readApiError(error) : undefined;
  const status = api?.status;
  const type = api?.type;
  const text = !(error instanceof Error)
    ? String(error)
    : api
    ? api.message ?? (status === undefined ? causeMessage(error) : undefined)
    : error.message;
  // Sentence-case house style: no trailing period after the detail.
  const detail = text?.trim().replace(/\.+$/, "");
  const said = detail ? `: ${detail}` : "";
  let message: string;
  let retryable: boolean;
  if (api && status === undefined && !api.hasBody) {
    // The operator's base_url may carry a key in its userinfo or query.
    const where = options.baseUrl ? ` at "${redactUrl(options.baseUrl)}"` : "";
    message = `Cannot reach LLM provider "${provider}"${where}${said}`;
    retryable = true;
  } else if (status === undefined) {
    const kind = type ? ` (${type})` : "";
    message = `LLM provider "${provider}" failed mid-stream${kind}${said}`;
    retryable = type !== undefined && RETRYABLE_TYPES.has(type);
  } else {
    const hint = status === 401
      ? " (check provider_credentials or the variable api_key_env names)"
      : "";
    message =
      `LLM provider "${provider}" answered HTTP ${status}${hint}${said}`;
    retryable = status === 408 || status === 409 || status === 429 ||
      status >= 500;
  }
  return new SkillboxError("skill_error", message, {
    cause: error,
    retryable,
    detail: {
      provider,
      status: status ?? null,
      ...(type ? { type } : {}),
    },
  });
}

/** A connection failure's own reason (refused, reset) beats "Connection error". */
function causeMessage(error: Error): string {
  return error.cause instanceof Error
    ? `${error.message.replace(/\.$/, "")} (${error.cause.message})`
    : error.message;
}

/**
 * The stream ended without the provider's end marker (connection dropped
 * mid-answer).
 */
export function truncatedStreamError(provider: string): SkillboxError {
  return new SkillboxError(
    "skill_error",
    `LLM provider "${provider}" closed the stream before the answer ended`,
    { retryable: true, detail: { provider, status: null } },
  );
}

/** A tool call as it streams in: its arguments come as pieces of JSON. */
export interface StreamedCall {
  /** The provider's id of the call. */
  id: string;
  /** The tool called. */
  name: string;
  /** The arguments' JSON text so far. */
  args: string;
}

/**
 * The turn's tool calls in the order of the indexes the provider gave them
 * (a Map, not an array: an index is the server's number, and a huge or
 * odd one would make a sparse array to walk, or a property to lose).
 *
 * @param provider named in errors
 * @param calls the calls by index
 * @returns the calls, arguments parsed
 * @throws {SkillboxError} `skill_error` for arguments that are not a JSON object
 */
export function toolCallsOf(
  provider: string,
  calls: Map<number, StreamedCall>,
): ChatToolCall[] {
  return [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, call]) => ({
      id: call.id,
      name: call.name,
      arguments: parseToolArguments(provider, call.name, call.args),
    }));
}

/**
 * Parses streamed tool arguments; empty text means no arguments.
 *
 * @throws {SkillboxError} `skill_error` when they are not a JSON object
 */
function parseToolArguments(
  provider: string,
  tool: string,
  text: string,
): Record<string, unknown> {
  if (text.trim() === "") return {};
  try {
    const value = JSON.parse(text);
    if (isPlainObject(value)) return value;
  } catch {
    // Not JSON: the same error as JSON that is not an object.
  }
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  throw new SkillboxError(
    "skill_error",
    `LLM provider "${provider}" sent tool call "${tool}" with arguments that are not a JSON object: "${shown}"`,
    { retryable: true, detail: { provider, status: null, tool } },
  );
}
