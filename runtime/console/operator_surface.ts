/**
 * Everything an operator sees, built from a host's configuration: the run
 * recorder (the observer the tool caller and skill runner report to), the
 * metrics, and the console's routes. The host gives late-bound views of its
 * sessions, sandbox processes and in-process requests.
 *
 * The routes: the dashboard at `/`, its script and style, the login form,
 * `/api/*` and `/metrics`, each behind the console's auth when tokens are
 * configured. Read-only: the only POSTs sign in and out.
 *
 * @module
 */

import { Hono } from "hono";
import type { OutgoingMessage, SessionScope } from "../capability.ts";
import type { HostConfig } from "../config_schema.ts";
import type { RegistryStatus } from "../load_report.ts";
import {
  createMetrics,
  type HostMetrics,
  rssReader,
} from "../metrics/metrics.ts";
import { openRecorder } from "../store/recorder.ts";
import { mayView, ownerOf, type RunScope } from "../store/store.ts";
import { checkToolPolicy, parseHostPolicy } from "../tools/policy.ts";
import type { RunRecorder } from "../store/recorder.ts";
import { operatorSecrets, Redactor } from "../store/redact.ts";
import {
  type CatalogView,
  type ConsoleSources,
  createApi,
  type ProcessView,
  type SessionView,
} from "./api.ts";
import { type ConsoleAuth, createConsoleAuth } from "./auth.ts";
import {
  CLIENT_SCRIPT,
  CLIENT_STYLE,
  CONSOLE_CSP,
  dashboardPage,
  loginPage,
} from "./page.tsx";
import {
  bodyRefusal,
  bodyTimeoutMs,
  readCapped,
} from "../transports/client_bounds.ts";

/** A session as the host knows it. */
export interface HostSessionInfo extends SessionScope {
  /** Its transport. */
  readonly transport: string;
  /** Capability requests running or queued. */
  readonly inFlight: number;
}

/** What the operator surface reads from the host. */
export interface OperatorSurfaceOptions {
  /** The host configuration (`store`, `tokens`, operator secrets). */
  config: HostConfig;
  /** The live client sessions. */
  sessions: () => Iterable<HostSessionInfo>;
  /** The live sandbox processes. */
  processes: () => readonly { pid: number; grant: string; busy: number }[];
  /** Sends an in-process request (for the catalog and search). */
  request: (
    message: Record<string, unknown> & { type: string },
  ) => Promise<OutgoingMessage>;
  /** Diagnostic lines (a failing store is reported here once). */
  log?: (line: string) => void;
  /**
   * Every tool's status and the registry's refusals, for the console
   * admins' catalog; null until the skills folders are loaded. @default none
   */
  registryStatus?: () => RegistryStatus | null;
}

/** The recorder, metrics and routes of one host. */
export interface OperatorSurface {
  /** The run observer to give the tool caller and skill runner. */
  recorder: RunRecorder;
  /** The metrics. */
  metrics: HostMetrics;
  /** The console routes (mount at `/`). */
  app: Hono;
  /** Writes pending runs and closes the store. */
  close(): Promise<void>;
}

/**
 * Builds the operator surface of a host.
 *
 * @param options the config and the host's views
 * @returns recorder, metrics and routes
 */
export function createOperatorSurface(
  options: OperatorSurfaceOptions,
): OperatorSurface {
  const { config } = options;
  const auth = createConsoleAuth(config.tokens);
  const scopeOf = consoleScopes(config, options.log);
  const transportOf = (session: SessionScope) =>
    "transport" in session && typeof session.transport === "string"
      ? session.transport
      : "in-process";
  // Once a second at most: see rssReader.
  const rssOf = rssReader(1000);
  const processes = () => {
    const list = options.processes();
    const rss = rssOf(list.map((p) => p.pid));
    return list.map((p): ProcessView => ({
      pid: p.pid,
      principal: principal(p.grant),
      busy: p.busy,
      rss_bytes: rss.get(p.pid) ?? 0,
    }));
  };
  const metrics = createMetrics({
    sessions: () =>
      Object.fromEntries(
        Map.groupBy(options.sessions(), (s) => s.transport).entries()
          .map(([transport, list]) => [transport, list.length]),
      ),
    sandbox: () => {
      const list = processes();
      const rssBytes = list.reduce((sum, p) => sum + p.rss_bytes, 0);
      return { processes: list.length, rssBytes };
    },
  });
  // The recorder asks once per session and keeps the answer (the sessions
  // listed below read it there too): the token comparison stays off the
  // per-call path. Only a configured token makes
  // an owner: the operator's in-process and stdio sessions, and an open
  // host's, own nothing (admins see them).
  const describeSession = (session: SessionScope) => {
    const label = session.token ? auth.labelOf(session.token) : null;
    return {
      transport: transportOf(session),
      tokenLabel: session.token ? label ?? "unknown token" : null,
      owner: label !== null ? ownerOf(session.token) : null,
    };
  };
  const recorder = openRecorder(config.store, {
    redactor: new Redactor(operatorSecrets(config)),
    describeSession,
    counters: metrics,
    log: options.log,
    host: hostId(config),
  });
  const listable = toolsListable(config, options.registryStatus);
  const app = createConsoleRoutes({
    auth,
    metrics,
    bodyTimeoutMs: bodyTimeoutMs(config.limits),
    recorder,
    catalog: async (query, scope) => {
      const view = await catalog(options.request, query);
      // Refusals and denials name operator folders: for admins only.
      if (scope === "all") return withStatuses(view, options.registryStatus);
      // The operator's list, less what this token's sessions cannot list.
      const mayList = listable(scope.owner);
      view.tools = view.tools.filter((t) => mayList(t.name));
      if (view.matches) view.matches = view.matches.filter(mayList);
      // A toolkit as the token's `toolkit/list` shows it: only the tools it
      // may list, and not at all when it may list none of them.
      view.toolkits = view.toolkits.flatMap((kit) => {
        const tools = kit.tools.filter(mayList);
        return tools.length > 0 || kit.tools.length === 0
          ? [{ ...kit, tools }]
          : [];
      });
      return view;
    },
    sessions: (scope = "all") =>
      [...options.sessions()].filter((s) =>
        mayView(scope, recorder.describe(s).owner)
      )
        .map((s): SessionView => ({
          id: s.id,
          transport: s.transport,
          token_label: s.token ? auth.labelOf(s.token) : null,
          in_flight: s.inFlight,
        })),
    processes,
    eventsDropped: (n) => metrics.eventsDropped(n),
    scope: (c) => scopeOf(auth.check(c)),
  });
  return { recorder, metrics, app, close: () => recorder.close() };
}

// The name this host's runs carry in a shared store: `host.id`, else
// `hostname:port` (the port as configured).
function hostId(config: OperatorSurfaceOptions["config"]): string {
  if (config.host?.id) return config.host.id;
  let name = "localhost";
  try {
    name = Deno.hostname();
  } catch {
    // no --allow-sys: the port alone still tells hosts on one machine apart
  }
  return `${name}:${config.listen.port}`;
}

// Whose work a console viewer sees, from the label auth gives a request:
// everything on an open host or for an admin token; else the runs of the
// token's own sessions. With tokens and no admin tokens nobody sees
// everything: naming every token admin would reopen issue 22's item 5.
function consoleScopes(
  config: HostConfig,
  log?: (line: string) => void,
): (label: string | null) => RunScope {
  const admins = new Set(config.console?.adminTokens ?? []);
  const byLabel = new Map(
    config.tokens.map((t, i) => [`token ${i + 1}`, {
      owner: ownerOf(t),
      admin: admins.has(t),
    }]),
  );
  if (config.tokens.length > 0 && ![...byLabel.values()].some((v) => v.admin)) {
    log?.(
      'console: no "console.admin_tokens" among "tokens": each token sees only its own sessions\' runs; name an admin token to see everything',
    );
  }
  const nobody: RunScope = { owner: "" };
  return (label) => {
    if (label === "open") return "all";
    const found = label === null ? undefined : byLabel.get(label);
    if (!found) return nobody;
    return found.admin ? "all" : { owner: found.owner };
  };
}

// Whether a tool is listed to a token's sessions (by its owner): the
// policy's rules for that token (`policy.tools.tokens`) hide tools from
// its `tool/list`, and the console lists it no more. A tool the registry
// does not know (not loaded yet) is not listed.
function toolsListable(
  config: HostConfig,
  status: OperatorSurfaceOptions["registryStatus"],
): (owner: string) => (name: string) => boolean {
  const rules = parseHostPolicy(config.policy).tools;
  const tokens = new Map(config.tokens.map((t) => [ownerOf(t), t]));
  return (owner) => {
    const token = tokens.get(owner) ?? "";
    const tools = new Map(status?.()?.tools.map((t) => [t.name, t]) ?? []);
    return (name) => {
      const tool = tools.get(name);
      return tool !== undefined &&
        checkToolPolicy(rules, tool, token).allowed;
    };
  };
}

async function catalog(
  request: OperatorSurfaceOptions["request"],
  query: string,
): Promise<CatalogView> {
  const [tools, toolkits, skills, found] = await Promise.all([
    request({ type: "tool/list/req" }),
    request({ type: "toolkit/list/req" }),
    request({ type: "skill/discover/req" }),
    query
      ? request({ type: "tool/list/req", query, include_deferred: true })
      : null,
  ]);
  const list = (m: OutgoingMessage | null, key: string) =>
    (m && Array.isArray(m[key]) ? m[key] : []) as Record<string, unknown>[];
  const view: CatalogView = {
    tools: list(tools, "tools").map((t) => ({
      name: String(t.name),
      description: String(t.description ?? ""),
      toolkit: typeof t.toolkit === "string" && t.toolkit ? t.toolkit : null,
      tags: Array.isArray(t.tags) ? t.tags.map(String) : [],
      status: "available",
      blocked_reason: null,
    })),
    toolkits: list(toolkits, "toolkits").map((k) => ({
      name: String(k.name),
      description: String(k.description ?? ""),
      tools: Array.isArray(k.tools) ? k.tools.map(String) : [],
    })),
    skills: list(skills, "skills").map((s) => {
      const meta = (s.metadata ?? {}) as Record<string, unknown>;
      return {
        name: String(s.name),
        description: String(s.description ?? ""),
        status: String(s.status ?? ""),
        blocked_reason: typeof meta.blocked_reason === "string"
          ? meta.blocked_reason
          : null,
        warnings: Array.isArray(meta.warnings) ? meta.warnings.map(String) : [],
      };
    }),
    refused: [],
  };
  if (found) view.matches = list(found, "tools").map((t) => String(t.name));
  return view;
}

// The catalog as the operator sees it, once the skills folders are
// loaded: every tool with its status (a denied one too, which a session's
// list leaves out) and every refusal.
function withStatuses(
  view: CatalogView,
  status: OperatorSurfaceOptions["registryStatus"],
): CatalogView {
  const registry = status?.();
  if (!registry) return view;
  return {
    ...view,
    tools: registry.tools.map((t) => ({
      name: t.name,
      description: t.description,
      toolkit: t.toolkit,
      tags: [...t.tags],
      status: t.status,
      blocked_reason: t.blockedReason,
      origin: t.origin,
      path: t.path,
    })),
    refused: registry.refused.map((r) => ({
      kind: r.kind,
      name: r.name,
      path: r.path,
      reason: r.reason,
    })),
  };
}

// The grant key is canonical JSON naming the module or session and what it
// may touch: show it short.
function principal(grant: string): string {
  return grant.length > 160 ? `${grant.slice(0, 160)}…` : grant;
}

/** Options of {@link createConsoleRoutes}. */
export interface ConsoleRoutesOptions extends ConsoleSources {
  /** Who may see the console. */
  auth: ConsoleAuth;
  /** The metrics served at `/metrics`. */
  metrics: HostMetrics;
  /** How long the sign-in form's body may take. @default 60000 */
  bodyTimeoutMs?: number;
}

const MAX_LOGIN_BYTES = 4096;

/**
 * Creates the console's routes (mount at `/`).
 *
 * @param options the sources, auth and metrics
 * @returns the routes
 * @example The dashboard without tokens
 * ```ts
 * import { createConsoleRoutes } from "./operator_surface.ts";
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
    const timeoutMs = options.bodyTimeoutMs ?? bodyTimeoutMs({});
    const body = await readCapped(c.req.raw.body, MAX_LOGIN_BYTES, {
      stopAtCap: true,
      timeoutMs,
    });
    const refusal = bodyRefusal(body, timeoutMs);
    if (refusal) return refusal;
    const token = body.over
      ? null
      : new URLSearchParams(body.text).get("token");
    const label = token ? auth.labelOf(token) : null;
    if (label === null) return html(loginPage({ error: "Unknown token" }), 401);
    auth.login(c, label);
    return c.redirect("/", 303);
  });
  app.post("/logout", (c) => {
    auth.logout(c);
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
