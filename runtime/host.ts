/**
 * `createHost()`: the skillbox host as a library. It serves A2E over
 * WebSocket (`/a2e`), HTTP+SSE (`/a2e/session|send|stream|health`) and
 * stdio, MCP (Streamable HTTP at `/mcp`, or stdio), plus `GET /health`, all
 * feeding one dispatcher; and it answers in-process calls through the same
 * handlers.
 *
 * @module
 */

import { Hono } from "hono";
import type { Capability, OutgoingMessage } from "./capability.ts";
import { defaultConfig, type HostConfig, type LimitsConfig } from "./config.ts";
import { Dispatcher } from "./dispatcher.ts";
import { Session } from "./session.ts";
import {
  createInProcessTransport,
  type InProcessCalls,
} from "./transports/in_process.ts";
import type { OpenSessionOptions, Refusal } from "./transports/_context.ts";
import { Admission, bearerToken } from "./admission.ts";
import { parseTokenQuotas } from "./quotas.ts";
import {
  createSseTransport,
  type SseTransport,
} from "./transports/http_sse.ts";
import { serveStdio, type StdioOptions } from "./transports/stdio.ts";
import { websocketHandler } from "./transports/websocket.ts";
import { registryFacts } from "./mcp/facts.ts";
import { createMcpHttp } from "./mcp/http.ts";
import { serveMcpStdio } from "./mcp/stdio.ts";
import { createOperatorSurface } from "./console/mount.ts";
import {
  createStandardStack,
  type LoadReport,
  type StandardStack,
} from "./stack.ts";

/** Options for {@link createHost}. */
export interface HostOptions {
  /**
   * The configuration (see `runtime/config.ts`); missing parts take their
   * defaults. @default defaultConfig()
   */
  config?: Partial<Omit<HostConfig, "limits">> & {
    limits?: Partial<LimitsConfig>;
  };
  /**
   * Capabilities served from the start. When omitted, the host serves the
   * standard `tools`, `toolkits` and `skill` capabilities over the config's
   * skills folders (see `runtime/stack.ts`); pass `[]` to serve none.
   * @default the standard capabilities
   */
  capabilities?: readonly Capability[];
  /** The config file the config came from, kept out of every sandbox. */
  configPath?: string;
  /** Receives diagnostic lines. @default ignore them */
  log?: (message: string) => void;
}

/** Options for {@link Host.listen}. */
export interface ListenOptions {
  /** The interface to listen on. @default the config's `listen.hostname` */
  hostname?: string;
  /** 0 picks a free port. @default the config's `listen.port` */
  port?: number;
}

/** Where a listening host can be reached. */
export interface ListenAddress {
  /** The interface the host listens on. */
  hostname: string;
  /** The TCP port it listens on (the one picked, when asked for 0). */
  port: number;
  /** `http://hostname:port` */
  url: string;
}

export type { CallOptions } from "./transports/in_process.ts";

/**
 * A running skillbox host. Its `request`, `callTool` and `callSkill` run on
 * the host's trusted in-process session (see {@link InProcessCalls}).
 */
export interface Host extends InProcessCalls {
  /** The HTTP handler: `Deno.serve(host.fetch)` or mount it in your server. */
  readonly fetch: (request: Request) => Response | Promise<Response>;
  /** The resolved configuration. */
  readonly config: HostConfig;
  /** The names of the capabilities served. */
  readonly capabilities: readonly string[];
  /** How many transport sessions are live (not counting in-process). */
  readonly sessionCount: number;
  /**
   * Resolves once the skills folders are loaded, with what was found
   * (zero counts when the host was given its own capabilities).
   */
  readonly ready: Promise<LoadReport>;
  /**
   * Serves HTTP, WebSocket and SSE on a TCP port.
   *
   * @returns the address, once listening
   */
  listen(options?: ListenOptions): Promise<ListenAddress>;
  /**
   * Serves one session over stdin/stdout NDJSON.
   *
   * @returns resolves when stdin closes
   */
  serveStdio(options?: StdioOptions): Promise<void>;
  /**
   * Serves one MCP session over stdin/stdout (trusted like stdio).
   *
   * @returns resolves when stdin closes
   */
  serveMcpStdio(): Promise<void>;
  /**
   * Plugs a capability in; sessions handshaking later are offered it.
   *
   * @throws {TypeError} when a request type it handles is already handled
   */
  addCapability(capability: Capability): void;
  /**
   * Sends a push message (no `req_id`) to every live, authorized session.
   *
   * @returns how many sessions it was sent to
   */
  broadcast(message: OutgoingMessage): number;
  /**
   * Stops accepting sessions, waits up to `timeoutSeconds` for in-flight
   * calls, cancels the rest, closes capabilities and the listener.
   */
  close(options?: { timeoutSeconds?: number }): Promise<void>;
}

/**
 * Creates a host.
 *
 * @param options configuration, capabilities, logger
 * @returns the host, not yet listening
 * @example Serve a health check in-process, then ping in-process
 * ```ts
 * import { createHost } from "./host.ts";
 * import assert from "node:assert/strict";
 * const host = createHost({ capabilities: [] });
 * const health = await host.fetch(new Request("http://x/health"));
 * assert.equal((await health.json()).status, "ok");
 * const pong = await host.request({ type: "ping" });
 * assert.equal(pong.type, "pong");
 * await host.close();
 * ```
 */
export function createHost(options: HostOptions = {}): Host {
  const base = defaultConfig();
  const given = options.config ?? {};
  const config: HostConfig = {
    ...base,
    ...given,
    listen: { ...base.listen, ...given.listen },
    limits: { ...base.limits, ...given.limits },
  };
  const log = options.log ?? (() => {});
  const startedAt = performance.now();
  // The stack's push messages go to the host's sessions, which exist only
  // once `host` does: route through a late-bound function.
  let broadcast = (_message: OutgoingMessage): number => 0;
  // The run history, metrics and console; its views of sessions, sandboxes
  // and in-process requests are read only when asked, after all exist.
  const operator = createOperatorSurface({
    // Embedder-given capabilities do not report runs: keep no history then.
    config: options.capabilities ? { ...config, store: null } : config,
    log,
    sessions: () => sessions,
    processes: () => stack?.processes() ?? [],
    request: (message) => local.request(message),
  });
  const stack: StandardStack | null = options.capabilities
    ? null
    : createStandardStack(config, {
      broadcast: (message) => broadcast(message),
      log,
      configPath: options.configPath,
      observer: operator.recorder,
    });
  const ready: Promise<LoadReport> = stack?.ready ??
    Promise.resolve({
      tools: 0,
      toolkits: 0,
      skills: 0,
      dirs: [],
      errors: [],
      warnings: [],
    });
  ready.catch(() => {});
  const quotas = parseTokenQuotas(config.policy, config.tokens);
  const admission = new Admission({
    maxSessions: config.limits.maxSessions,
    maxPending: config.limits.maxPendingSessions,
    handshakeTimeoutMs: config.limits.handshakeTimeoutSeconds * 1000,
    requiresAuth: config.tokens.length > 0,
    quotas,
  });
  const dispatcher = new Dispatcher({
    capabilities: options.capabilities ?? stack?.capabilities,
    tokens: config.tokens,
    maxMessageBytes: config.limits.maxMessageBytes,
    maxParallelHost: config.limits.maxParallelHost,
    startedAt,
    quotas,
    admit: (session, token) => admission.admit(session, token),
  });
  const sessions = new Set<Session>();
  let closing = false;

  const admitSession = (open: OpenSessionOptions): Session | Refusal => {
    if (closing) return { status: 503, reason: "the host is shutting down" };
    const token = bearerToken(open.authorization, config.tokens);
    if (token === null) {
      return {
        status: 401,
        reason: "the Authorization header holds no valid token",
      };
    }
    const session = new Session({
      send: open.send,
      transport: open.transport,
      maxParallel: config.limits.maxParallel,
      onEnd: (reason) => {
        sessions.delete(session);
        // Nothing the session ran stays alive (its eval processes).
        stack?.endSession(session.id);
        admission.leave(session);
        open.onEnd?.(reason);
      },
    });
    const refused = admission.open(session, {
      token,
      // stdio: the client started the host. MCP: /mcp checks the bearer
      // token on every request before a session opens, and sets auth itself.
      trusted: open.transport === "stdio" || open.transport === "mcp",
    });
    if (refused !== "") return { status: 503, reason: refused };
    sessions.add(session);
    return session;
  };
  const openSession = (open: OpenSessionOptions): Session | string => {
    const opened = admitSession(open);
    return opened instanceof Session ? opened : opened.reason;
  };
  const context = {
    dispatcher,
    limits: config.limits,
    openSession,
    admitSession,
    log,
  };

  const sse: SseTransport = createSseTransport(context);
  const mcpOptions = {
    facts: registryFacts(() => stack?.snapshot ?? null),
  };
  const mcp = createMcpHttp(context, { ...mcpOptions, tokens: config.tokens });
  const app = new Hono();
  app.get("/health", (c) =>
    c.json({
      status: "ok",
      sessions: sessions.size,
      uptime_seconds: (performance.now() - startedAt) / 1000,
    }));
  app.get("/a2e", websocketHandler(context));
  app.route("/a2e", sse.app);
  app.all("/mcp", (c) => mcp.handle(c.req.raw));
  app.route("/", operator.app);
  app.onError((error, c) => {
    log(`Cannot handle ${c.req.method} ${c.req.path}: ${error.message}`);
    return c.json({ error: "Internal error" }, 500);
  });

  const local = createInProcessTransport({
    dispatcher,
    maxParallel: config.limits.maxParallel,
    closing: () => closing,
  });
  let server: Deno.HttpServer | undefined;

  const host: Host = {
    fetch: (req) => app.fetch(req),
    config,
    get capabilities() {
      return dispatcher.capabilities.map((c) => c.name);
    },
    get sessionCount() {
      return sessions.size;
    },
    ready,
    listen(listenOptions = {}) {
      if (server) {
        return Promise.reject(new Error("Cannot listen: already listening"));
      }
      return new Promise((resolve, reject) => {
        try {
          server = Deno.serve({
            hostname: listenOptions.hostname ?? config.listen.hostname,
            port: listenOptions.port ?? config.listen.port,
            onListen: (addr) => {
              const hostname = addr.hostname;
              const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
              resolve({
                hostname,
                port: addr.port,
                url: `http://${shown}:${addr.port}`,
              });
            },
          }, host.fetch);
        } catch (error) {
          reject(error);
        }
      });
    },
    serveStdio: (stdioOptions) => serveStdio(context, stdioOptions),
    serveMcpStdio: () => serveMcpStdio(context, mcpOptions),
    addCapability: (capability) => dispatcher.addCapability(capability),
    broadcast(message) {
      let count = 0;
      for (const session of sessions) {
        if (!dispatcher.requiresAuth || session.auth === "accepted") {
          session.send(message);
          count++;
        }
      }
      return count;
    },
    request: local.request,
    callTool: local.callTool,
    callSkill: local.callSkill,
    async close(closeOptions = {}) {
      if (closing) return;
      closing = true;
      const timeoutMs =
        (closeOptions.timeoutSeconds ?? config.limits.shutdownTimeoutSeconds) *
        1000;
      const all = [...sessions, local.session];
      for (const session of all) session.draining = true;
      await Promise.all(all.map((session) => session.drain(timeoutMs)));
      for (const session of all) session.close("Host closing");
      sse.close();
      await mcp.close();
      await dispatcher.closeCapabilities();
      await stack?.close();
      operator.close();
      await server?.shutdown();
    },
  };
  broadcast = (message) => host.broadcast(message);
  return host;
}
