/**
 * The console's HTTP routes: the dashboard at `/`, its script and style, the
 * login form, `/api/*` and `/metrics`, each behind the console's auth when
 * tokens are configured. Read-only: the only POSTs sign in and out.
 *
 * @module
 */

import { Hono } from "hono";
import { getCookie } from "hono/cookie";
import type { HostMetrics } from "../metrics/metrics.ts";
import { type ConsoleSources, createApi } from "./api.ts";
import { type ConsoleAuth, COOKIE, setSessionCookie } from "./auth.ts";
import { CLIENT_SCRIPT, CLIENT_STYLE } from "./client_script.ts";
import { CONSOLE_CSP, dashboardPage, loginPage } from "./page.tsx";
import { readCapped } from "../transports/client_bounds.ts";

/** Options of {@link createConsoleRoutes}. */
export interface ConsoleRoutesOptions extends ConsoleSources {
  /** Who may see the console. */
  auth: ConsoleAuth;
  /** The metrics served at `/metrics`. */
  metrics: HostMetrics;
}

const MAX_LOGIN_BYTES = 4096;

/**
 * Creates the console's routes (mount at `/`).
 *
 * @param options the sources, auth and metrics
 * @returns the routes
 * @example The dashboard without tokens
 * ```ts
 * import { createConsoleRoutes } from "./routes.ts";
 * import { createConsoleAuth } from "./auth.ts";
 * import { createMetrics } from "../metrics/metrics.ts";
 * import { openRecorder } from "../store/recorder.ts";
 * import assert from "node:assert/strict";
 * const recorder = openRecorder(null);
 * const app = createConsoleRoutes({
 *   recorder, auth: createConsoleAuth([]), metrics: createMetrics({ defaults: false }),
 *   catalog: () => Promise.reject(), sessions: () => [], processes: () => [],
 * });
 * const page = await app.request("/");
 * assert.match(await page.text(), /skillbox console/);
 * recorder.close();
 * ```
 */
export function createConsoleRoutes(options: ConsoleRoutesOptions): Hono {
  const { auth, metrics } = options;
  const app = new Hono();
  app.get(
    "/console/app.js",
    () => asset(CLIENT_SCRIPT, "text/javascript; charset=utf-8"),
  );
  app.get(
    "/console/app.css",
    () => asset(CLIENT_STYLE, "text/css; charset=utf-8"),
  );

  app.get(
    "/login",
    (c) => auth.required ? html(loginPage()) : c.redirect("/", 303),
  );
  app.post("/login", async (c) => {
    // A foreign Origin never gets here (the host's door refuses it), and
    // the door throttles this form's wrong tokens by their 401.
    if (!auth.required) return c.redirect("/", 303);
    const body = await readCapped(c.req.raw.body, MAX_LOGIN_BYTES, {
      stopAtCap: true,
    });
    const token = body.over
      ? null
      : new URLSearchParams(body.text).get("token");
    const label = token ? auth.labelOf(token) : null;
    if (label === null) return html(loginPage({ error: "Unknown token" }), 401);
    setSessionCookie(c, auth.login(label));
    return c.redirect("/", 303);
  });
  app.post("/logout", (c) => {
    const cookie = getCookie(c, COOKIE);
    if (cookie) auth.logout(cookie);
    c.header(
      "Set-Cookie",
      `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`,
    );
    return c.redirect(auth.required ? "/login" : "/", 303);
  });

  app.get(
    "/",
    auth.guard("page"),
    () => html(dashboardPage({ auth: auth.required })),
  );
  app.use("/api/*", auth.guard("api"));
  app.route("/api", createApi(options));
  app.get(
    "/metrics",
    auth.guard("api"),
    async () =>
      new Response(await metrics.text(), {
        headers: {
          "Content-Type": metrics.contentType,
          "Cache-Control": "no-store",
        },
      }),
  );
  return app;
}

// A console page: only the host's own script and style may run in it.
function html(body: string, status: 200 | 401 = 200): Response {
  return new Response(body, {
    status,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": CONSOLE_CSP,
      "X-Content-Type-Options": "nosniff",
      "X-Frame-Options": "DENY",
      // "same-origin", not "no-referrer": under no-referrer a browser sends
      // `Origin: null` with the login form's POST, which /login must refuse.
      "Referrer-Policy": "same-origin",
      "Cache-Control": "no-store",
    },
  });
}

// The console's script or style.
function asset(body: string, type: string): Response {
  return new Response(body, {
    headers: {
      "Content-Type": type,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "no-cache",
    },
  });
}
