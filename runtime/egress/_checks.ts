/**
 * The broker's handling of what crosses it: URLs and headers from sandbox
 * code checked before use, and operator secrets cut from answers.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { SkillboxError } from "../../protocol/errors.ts";

// Set by the broker, never by sandbox code.
const HOP_HEADERS = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
]);
const REDACTED = "[REDACTED]";

/** An absolute http(s) URL without credentials, or a `tool_error`. */
export function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SkillboxError("tool_error", `"${text}" is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new SkillboxError(
      "tool_error",
      `Only http and https URLs are supported, got "${url.protocol}"`,
    );
  }
  if (url.username || url.password) {
    throw new SkillboxError(
      "tool_error",
      "Credentials in the URL are not supported: use headers",
    );
  }
  return url;
}

/** Sandbox headers, lower-cased, without hop-by-hop ones; refuses line breaks. */
export function cleanHeaders(
  raw: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    const name = k.toLowerCase();
    if (HOP_HEADERS.has(name) || typeof v !== "string") continue;
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name) || /[\r\n\0]/.test(v)) {
      throw new SkillboxError("tool_error", `Header "${k}" is not valid`);
    }
    out[name] = v;
  }
  return out;
}

/** The error for an aborted request: `timeout` when the broker's own clock ran out. */
export function timeoutError(signal: AbortSignal): SkillboxError {
  return signal.reason instanceof DOMException &&
      signal.reason.name === "TimeoutError"
    ? new SkillboxError("timeout", "Request timed out")
    : new SkillboxError("tool_error", "Request was cancelled");
}

/** The text with every value replaced by a marker. */
export function redactText(text: string, values: string[]): string {
  let out = text;
  for (const v of values) out = out.split(v).join(REDACTED);
  return out;
}

/** The bytes with every value (as UTF-8) replaced by a marker. */
export function redactBytes(bytes: Buffer, values: string[]): Buffer {
  let out = bytes;
  for (const v of values) {
    const needle = Buffer.from(v);
    if (out.indexOf(needle) === -1) continue;
    const parts: Buffer[] = [];
    let at = 0;
    for (let i = out.indexOf(needle); i !== -1; i = out.indexOf(needle, at)) {
      parts.push(out.subarray(at, i), Buffer.from(REDACTED));
      at = i + needle.length;
    }
    parts.push(out.subarray(at));
    out = Buffer.concat(parts);
  }
  return out;
}
