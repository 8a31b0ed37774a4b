/**
 * Who may see the console, `/api/*` and `/metrics`: anyone when no tokens
 * are configured (the host then listens on loopback by default), else a
 * request with `Authorization: Bearer <token>` or the session cookie the
 * login form sets (`HttpOnly`, `SameSite=Strict`). The cookie holds a random
 * id, never the token; the host keeps only which token label it stands for,
 * at most 32 sessions per label (its oldest ended beyond). Wrong tokens
 * are throttled per client address at the host's door (`runtime/doors/`).
 *
 * @module
 */

import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { isAcceptedToken } from "../admission.ts";

const COOKIE = "skillbox_console";
// Set and cleared with the same flags: a clearing Set-Cookie for another
// path would leave the session's cookie in the browser.
const COOKIE_FLAGS = {
  httpOnly: true,
  sameSite: "Strict",
  path: "/",
} as const;
const SESSION_MS = 12 * 3600_000;
// Console sessions one token may hold; its oldest is ended beyond, never
// another token's (a flood of sign-ins cannot sign the operator out).
const MAX_SESSIONS_PER_TOKEN = 32;

/** Console authentication over the host's tokens. */
export interface ConsoleAuth {
  /** Whether a token is needed at all. */
  readonly required: boolean;
  /**
   * The label of the configured token a value matches (`token 1`, ...), or
   * null. Compared in time independent of where they differ.
   */
  labelOf(token: string): string | null;
  /** Starts a console session for a label and sets its cookie. */
  login(c: Context, label: string): void;
  /** Ends the request's console session, if any, and clears its cookie. */
  logout(c: Context): void;
  /** The label a request is authenticated as, or null. */
  check(c: Context): string | null;
  /** Middleware refusing unauthenticated requests. */
  guard(kind: "page" | "api"): MiddlewareHandler;
}

/**
 * Creates the console's authentication.
 *
 * @param tokens the configured auth tokens (empty: no auth)
 * @returns the authentication
 * @example Labels, never tokens
 * ```ts
 * import { createConsoleAuth } from "./auth.ts";
 * import assert from "node:assert/strict";
 * const auth = createConsoleAuth(["alpha-token", "beta-token"]);
 * assert.equal(auth.labelOf("beta-token"), "token 2");
 * assert.equal(auth.labelOf("nope"), null);
 * ```
 */
export function createConsoleAuth(tokens: readonly string[]): ConsoleAuth {
  // The console sessions by cookie id, oldest first.
  const sessions = new Map<string, { label: string; expires: number }>();

  // Every token is compared, the first match kept: how long it takes
  // does not tell which one matched.
  const labelOf = (token: string): string | null => {
    let found: string | null = null;
    tokens.forEach((known, i) => {
      if (isAcceptedToken([known], token) && found === null) {
        found = `token ${i + 1}`;
      }
    });
    return found;
  };

  const check = (c: Context): string | null => {
    if (tokens.length === 0) return "open";
    const header = c.req.header("authorization") ?? "";
    const bearer = /^Bearer\s+(.+)$/i.exec(header);
    if (bearer?.[1]) return labelOf(bearer[1].trim());
    const cookie = getCookie(c, COOKIE);
    if (!cookie) return null;
    const session = sessions.get(cookie);
    if (!session) return null;
    if (session.expires < Date.now()) {
      sessions.delete(cookie);
      return null;
    }
    return session.label;
  };

  return {
    required: tokens.length > 0,
    labelOf,
    login(c, label) {
      // A scan of every console session (32 a token at most): sign-ins
      // are rare, and one map is all there is to keep in step.
      const mine = sessions.entries().filter(([, s]) => s.label === label)
        .toArray();
      const over = mine.length + 1 - MAX_SESSIONS_PER_TOKEN;
      for (const [oldest] of mine.slice(0, Math.max(0, over))) {
        sessions.delete(oldest);
      }
      const id = crypto.getRandomValues(new Uint8Array(32)).toHex();
      sessions.set(id, { label, expires: Date.now() + SESSION_MS });
      setCookie(c, COOKIE, id, {
        ...COOKIE_FLAGS,
        secure: new URL(c.req.url).protocol === "https:",
        maxAge: SESSION_MS / 1000,
      });
    },
    logout(c) {
      const cookie = deleteCookie(c, COOKIE, COOKIE_FLAGS);
      if (cookie) sessions.delete(cookie);
    },
    check,
    guard(kind) {
      return async (c, next) => {
        if (check(c) !== null) return await next();
        if (kind === "page") return c.redirect("/login", 303);
        c.header("WWW-Authenticate", 'Bearer realm="skillbox"');
        return c.json({ error: "Unauthorized: give a token" }, 401);
      };
    },
  };
}
