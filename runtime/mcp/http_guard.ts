/**
 * What every request to `/mcp` must pass before it reaches a session: the
 * bearer token when tokens are configured (401 otherwise). `Host` and
 * `Origin` were checked at the host's door (`runtime/doors/guard.ts`), in
 * front of every route.
 *
 * @module
 */

import { bearerToken } from "../admission.ts";
import { jsonError } from "../doors/guard.ts";

/**
 * Checks a request's token.
 *
 * @param request the request to `/mcp`
 * @param tokens the accepted bearer tokens; empty means no auth
 * @returns the token it presented ("" when none), or the refusal to send
 * @example A request without the token is refused
 * ```ts
 * import { guardRequest } from "./http_guard.ts";
 * import assert from "node:assert/strict";
 * const refused = guardRequest(new Request("http://x/mcp"), ["t"]);
 * assert.ok(refused instanceof Response);
 * assert.equal(refused.status, 401);
 * ```
 */
export function guardRequest(
  request: Request,
  tokens: readonly string[],
): string | Response {
  const checked = bearerToken(
    request.headers.get("authorization") ?? undefined,
    tokens,
  );
  if (tokens.length > 0 && typeof checked !== "string") {
    return jsonError(
      401,
      checked === undefined ? "Missing bearer token" : "Invalid bearer token",
      { "WWW-Authenticate": 'Bearer realm="skillbox"' },
    );
  }
  return checked ?? "";
}
