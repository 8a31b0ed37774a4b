/**
 * What every provider's streamed turn shares: its text and tool calls
 * gathered as they come, the bounds they are counted against (bytes and
 * tool calls, so a server cannot flood the host), how the turn ends
 * (aborted, cut short, or answered), and the errors it fails with, mapped
 * from each SDK's failures in one place so both providers report the same
 * way: provider name, HTTP status, the provider's own message, and whether
 * a retry may help.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { APIError as AnthropicApiError } from "@anthropic-ai/sdk";
import { APIError as OpenAiApiError } from "openai";
import type { ChatResponse, ChatToolCall } from "../../protocol/chat.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import { isPlainObject } from "../../protocol/json.ts";
import type { ChatOptions } from "./provider.ts";
import { DEFAULT_LLM_RULES, type LlmRules, redactUrl } from "./config.ts";
import { scrubText } from "../toolkits/secrets.ts";

/** The two limits of a turn: the operator's `llm` rules for them. */
export type TurnLimits = Pick<LlmRules, "maxResponseBytes" | "maxToolCalls">;

/**
 * One turn as it streams in: its text, tool calls and usage, every piece
 * counted against the turn's limits as it arrives.
 *
 * @example Text past the limit fails the turn
 * ```ts
 * import { StreamedTurn } from "./_turn.ts";
 * import assert from "node:assert/strict";
 * const turn = new StreamedTurn("openai", { maxResponseBytes: 4, maxToolCalls: 1 });
 * turn.addText("abcd");
 * assert.equal(turn.text, "abcd");
 * assert.throws(() => turn.addText("é"), /more than 4 bytes/);
 * ```
 */
export class StreamedTurn {
  /** The text so far. */
  text = "";
  /**
   * The tool calls so far, by the provider's index (a Map, not an array:
   * an index is the server's number, and a huge or odd one would make a
   * sparse array to walk, or a property to lose).
   */
  readonly calls: Map<number, StreamedCall> = new Map();
  /** The token counts as the provider last reported them. */
  usage: ChatResponse["usage"] = { input_tokens: 0, output_tokens: 0 };
  readonly #provider: string;
  readonly #limits: TurnLimits;
  readonly #onToken: ((text: string) => void) | undefined;
  #bytes = 0;

  /**
   * Starts a turn's count at zero.
   *
   * @param provider named in the error
   * @param limits the turn's limits @default {@link DEFAULT_LLM_RULES}'s
   * @param onToken receives each piece of text as it arrives
   */
  constructor(
    provider: string,
    limits: TurnLimits = DEFAULT_LLM_RULES,
    onToken?: (text: string) => void,
  ) {
    this.#provider = provider;
    this.#limits = limits;
    this.#onToken = onToken;
  }

  /**
   * Counts a piece of text, adds it and passes it on to `onToken`, as a
   * string ({@link add}).
   *
   * @throws {SkillboxError} `skill_error` past `maxResponseBytes`
   */
  addText(piece: unknown): void {
    const text = this.add(piece);
    this.text += text;
    this.#onToken?.(text);
  }

  /**
   * Counts a tool call's id, name or arguments.
   *
   * @param piece the piece as it arrived: typed a string, but the SDKs pass
   *   the server's JSON through unchecked
   * @returns its string form, what was counted: only that may be kept or
   *   passed on (an object counted as "[object Object]" but kept whole
   *   would carry any size past the bound)
   * @throws {SkillboxError} `skill_error` past `maxResponseBytes`
   */
  add(piece: unknown): string {
    const text = String(piece);
    // Counted without encoding a copy: the text may be large.
    this.#bytes += Buffer.byteLength(text);
    if (this.#bytes <= this.#limits.maxResponseBytes) return text;
    const limit = this.#limits.maxResponseBytes;
    throw new SkillboxError(
      "skill_error",
      `LLM provider "${this.#provider}" sent more than ${limit} bytes of text and tool calls in one turn: the limit is llm.max_response_bytes (${limit})`,
      { detail: { provider: this.#provider, limit: "max_response_bytes" } },
    );
  }

  /**
   * The tool call at the provider's index, made (and counted) the first
   * time the index comes.
   *
   * @param index the provider's index of the call
   * @returns the call, to fill in as its pieces come
   * @throws {SkillboxError} `skill_error` past `maxToolCalls`
   */
  callAt(index: number): StreamedCall {
    let call = this.calls.get(index);
    if (call) return call;
    const limit = this.#limits.maxToolCalls;
    if (this.calls.size >= limit) {
      throw new SkillboxError(
        "skill_error",
        `LLM provider "${this.#provider}" made more than ${limit} tool calls in one turn: the limit is llm.max_tool_calls (${limit})`,
        { detail: { provider: this.#provider, limit: "max_tool_calls" } },
      );
    }
    this.calls.set(index, call = { id: "", name: "", args: "" });
    return call;
  }

  /**
   * The turn's tool calls in the order of their indexes, arguments parsed.
   *
   * @throws {SkillboxError} `skill_error` for arguments that are not a JSON
   *   object
   */
  toolCalls(): ChatToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({
        id: call.id,
        name: call.name,
        arguments: parseToolArguments(this.#provider, call.name, call.args),
      }));
  }
}

/** Error types a provider sends mid-stream that a retry may clear. */
const RETRYABLE_TYPES = new Set([
  "overloaded_error",
  "api_error",
  "server_error",
  "rate_limit_error",
  "rate_limit_exceeded",
]);

/**
 * Maps anything a provider SDK threw to the error the skill sees, the same
 * way for every provider: a {@link SkillboxError} passes through, either
 * SDK's `APIError` (an HTTP answer, an error event mid-stream, or a failed
 * connection) keeps its status, message and type, and anything else becomes
 * a provider failure with its message.
 *
 * @param provider `openai` or `anthropic`
 * @param error what the SDK threw
 * @param options `baseUrl` (named for connection failures) and the `apiKey`
 *   sent, scrubbed from the provider's message
 * @returns the error to throw
 * @example A non-SDK failure becomes a provider error
 * ```ts
 * import { mapProviderError } from "./_turn.ts";
 * import assert from "node:assert/strict";
 * const error = mapProviderError("openai", new Error("boom"), {
 *   baseUrl: "https://api.openai.com/v1",
 * });
 * assert.equal(error.message, 'LLM provider "openai" failed mid-stream: boom');
 * ```
 */
export function mapProviderError(
  provider: string,
  error: unknown,
  options: Pick<TurnOptions, "baseUrl" | "apiKey">,
): Error {
  if (error instanceof SkillboxError) return error;
  // Our own fetch's refusals and bounds, wrapped by the SDK as a
  // connection or stream error: their message is the clear one.
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof SkillboxError) return cause;
  const api =
    error instanceof OpenAiApiError || error instanceof AnthropicApiError
      ? error
      : undefined;
  const status = api?.status;
  // Both SDKs copy the type and message from the server's JSON unchecked.
  // OpenAI keeps the body's `error` member; Anthropic's whole body,
  // `{type: "error", error: {type, message}}`, with its message taken out.
  const type = typeof api?.type === "string" ? api.type : undefined;
  const sent = api instanceof AnthropicApiError
    ? api.apiMessage
    : (api?.error as { message?: unknown } | undefined)?.message;
  const text = !(error instanceof Error)
    ? String(error)
    : !api
    ? error.message
    : typeof sent === "string"
    ? sent
    : status === undefined
    ? causeMessage(error)
    : undefined;
  // Sentence-case house style: no trailing period after the detail. The
  // lookbehind starts a match only where a run of dots starts: `\.+$` alone
  // took quadratic time on a message of dots not at its end.
  // A server that echoes the credential it got would hand the host's key
  // to the skill's caller.
  const detail = scrubText(text ?? "", [options.apiKey ?? ""]).trim()
    .replace(/(?<!\.)\.+$/, "");
  const said = detail ? `: ${detail}` : "";
  let message: string;
  let retryable: boolean;
  if (api && status === undefined && api.error === undefined) {
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
 * What {@link streamTurn} needs besides the chat's own options; a provider
 * passes its `ProviderSettings`, which hold them.
 */
export interface TurnOptions extends ChatOptions {
  /** `openai` or `anthropic`, named in errors. */
  provider: string;
  /** The provider's API root, named for connection failures. */
  baseUrl: string;
  /** The key the request carried, scrubbed from error messages. @default none */
  apiKey?: string;
  /** Bounds of the turn. @default {@link DEFAULT_LLM_RULES}'s */
  limits?: TurnLimits;
}

/**
 * Runs one provider's streamed turn: `read` consumes the SDK's stream into
 * the turn and returns the normalized stop reason, or null when the stream
 * ended without the provider's end marker (the connection dropped
 * mid-answer). Throwing inside `read` (a bound passed) ends the SDK's
 * stream, which aborts the request: the provider's connection is closed.
 *
 * @param options the provider, its endpoint, limits and chat options
 * @param read reads the stream into the turn
 * @returns the assembled response
 * @throws the signal's reason when it aborts; otherwise a `skill_error`
 *   ({@link mapProviderError})
 * @example A stream without its end marker fails the turn
 * ```ts
 * import { streamTurn } from "./_turn.ts";
 * import assert from "node:assert/strict";
 * const options = {
 *   provider: "openai",
 *   baseUrl: "https://api.openai.com/v1",
 * };
 * const res = await streamTurn(options, (turn) => {
 *   turn.addText("hi");
 *   return Promise.resolve("end_turn");
 * });
 * assert.equal(res.text, "hi");
 * await assert.rejects(
 *   streamTurn(options, () => Promise.resolve(null)),
 *   /closed the stream before the answer ended/,
 * );
 * ```
 */
export async function streamTurn(
  options: TurnOptions,
  read: (turn: StreamedTurn) => Promise<string | null>,
): Promise<ChatResponse> {
  const { provider, signal } = options;
  const turn = new StreamedTurn(provider, options.limits, options.onToken);
  let stopReason: string | null;
  try {
    stopReason = await read(turn);
  } catch (error) {
    // A timeout or cancellation surfaces as itself, not as a failure.
    signal?.throwIfAborted();
    throw mapProviderError(provider, error, options);
  }
  // The SDKs end the iteration quietly on abort: say it was aborted.
  signal?.throwIfAborted();
  if (stopReason === null) {
    throw new SkillboxError(
      "skill_error",
      `LLM provider "${provider}" closed the stream before the answer ended`,
      { retryable: true, detail: { provider, status: null } },
    );
  }
  // The SDKs pass the server's JSON through unchecked: a stop reason or a
  // count may be any JSON value, which the store and the skill would take
  // as sent.
  return {
    text: turn.text,
    tool_calls: turn.toolCalls(),
    stop_reason: typeof stopReason === "string" ? stopReason : "unknown",
    usage: {
      input_tokens: tokenCount(turn.usage.input_tokens),
      output_tokens: tokenCount(turn.usage.output_tokens),
    },
    turn: options.turn ?? 1,
  };
}

/** A count as sent if it is one; a fraction cut, past the safe range capped, else 0. */
function tokenCount(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) return 0;
  return Math.min(Math.max(Math.trunc(value), 0), Number.MAX_SAFE_INTEGER);
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
