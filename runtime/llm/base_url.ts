/**
 * The two things the host does with an LLM `base_url`: compare a caller's
 * against the host's (a borrowed key only goes where the host sends it), and
 * strip the places secrets hide before a URL is shown to a client.
 *
 * @module
 */

import type { LlmProviderName } from "./config_check.ts";

/**
 * Where each provider's SDK sends requests when no `base_url` is set.
 *
 * @example
 * ```ts
 * import { OFFICIAL_BASE_URLS } from "./base_url.ts";
 * import assert from "node:assert/strict";
 * assert.equal(OFFICIAL_BASE_URLS.anthropic, "https://api.anthropic.com");
 * ```
 */
export const OFFICIAL_BASE_URLS: Readonly<Record<LlmProviderName, string>> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
};

/**
 * Whether two `base_url` settings of a provider point at the same endpoint:
 * unset means the provider's official API, trailing slashes do not count.
 *
 * @param provider the provider both settings are for
 * @param a one `base_url`, or undefined for the official API
 * @param b the other
 * @returns true when requests would go to the same place
 * @example Unset is the official API
 * ```ts
 * import { sameBaseUrl } from "./base_url.ts";
 * import assert from "node:assert/strict";
 * assert.ok(sameBaseUrl("openai", "https://api.openai.com/v1/", undefined));
 * assert.ok(!sameBaseUrl("openai", "http://evil.test/v1", undefined));
 * ```
 */
export function sameBaseUrl(
  provider: LlmProviderName,
  a: string | undefined,
  b: string | undefined,
): boolean {
  return normalize(provider, a) === normalize(provider, b);
}

/**
 * Drops userinfo, query and fragment from a URL: places secrets hide.
 *
 * @param url any string
 * @returns the URL without them, or `""` when it does not parse
 * @example
 * ```ts
 * import { redactUrl } from "./base_url.ts";
 * import assert from "node:assert/strict";
 * assert.equal(redactUrl("https://u:p@x.test/v1?key=1#f"), "https://x.test/v1");
 * assert.equal(redactUrl("not a url"), "");
 * ```
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    u.hash = "";
    return u.href.replace(/\/$/, u.pathname === "/" ? "" : "/");
  } catch {
    return "";
  }
}

function normalize(provider: LlmProviderName, url: string | undefined) {
  return (url ?? OFFICIAL_BASE_URLS[provider]).replace(/\/+$/, "");
}
