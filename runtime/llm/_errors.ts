/**
 * Maps provider SDK failures to {@link SkillboxError}s in one place, so both
 * providers report the same way: provider name, HTTP status, the provider's
 * own message, and whether a retry may help.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";

/** What a provider module extracted from its SDK's error. */
export interface ProviderFailure {
  /** HTTP status, absent for connection failures and mid-stream errors. */
  status?: number;
  /** The provider's own message (from its error body), if any. */
  message?: string;
  /** The provider's error type (`rate_limit_error`, `overloaded_error`). */
  type?: string;
  /** The request never got an answer (DNS, refused, reset). */
  connection?: boolean;
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
 * Builds the error for a failed provider call.
 *
 * @param provider `openai` or `anthropic`
 * @param failure what went wrong
 * @param options `cause` and the `baseUrl` (named for connection failures)
 * @returns a `skill_error` with `detail.provider` and `detail.status`
 */
export function providerError(
  provider: string,
  failure: ProviderFailure,
  options: { cause?: unknown; baseUrl?: string } = {},
): SkillboxError {
  const { status, type } = failure;
  // Sentence-case house style: no trailing period after the detail.
  const detail = failure.message?.trim().replace(/\.+$/, "");
  const said = detail ? `: ${detail}` : "";
  let message: string;
  let retryable: boolean;
  if (failure.connection) {
    const where = options.baseUrl ? ` at "${options.baseUrl}"` : "";
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
    cause: options.cause,
    retryable,
    detail: {
      provider,
      status: status ?? null,
      ...(type ? { type } : {}),
    },
  });
}

/**
 * Rejects with the abort reason when the caller aborted, so a timeout or
 * cancellation surfaces as itself rather than as a provider failure.
 */
export function rethrowIfAborted(signal: AbortSignal | undefined): void {
  signal?.throwIfAborted();
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

/** A tool call whose streamed arguments are not a JSON object. */
export function badArgumentsError(
  provider: string,
  tool: string,
  text: string,
): SkillboxError {
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new SkillboxError(
    "skill_error",
    `LLM provider "${provider}" sent tool call "${tool}" with arguments that are not a JSON object: "${shown}"`,
    { retryable: true, detail: { provider, status: null, tool } },
  );
}

/** Parses streamed tool arguments; empty text means no arguments. */
export function parseToolArguments(
  provider: string,
  tool: string,
  text: string,
): Record<string, unknown> {
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badArgumentsError(provider, tool, text);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw badArgumentsError(provider, tool, text);
  }
  return value as Record<string, unknown>;
}
