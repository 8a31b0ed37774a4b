/**
 * The host's HTTP side: the routes of its handler ({@link httpApp}) and its
 * TCP listener ({@link listener}).
 *
 * @module
 */

import { Hono } from "hono";
import type { ListenConfig } from "./config_schema.ts";
import type { McpHttp } from "./mcp/http.ts";
import type { SseTransport } from "./transports/http_sse.ts";
import type { TransportContext } from "./transports/transport_context.ts";
import { websocketHandler } from "./transports/websocket.ts";
import { BodyReadError } from "./transports/client_bounds.ts";
import type { HttpHandler } from "./doors/guard.ts";

/**
 * Options for the host's `listen`.
 *
 * @example Listen on a free loopback port, then shut down
 * ```ts
 * import { createHost } from "./host.ts";
 * import assert from "node:assert/strict";
 * const host = createHost({ capabilities: [] });
 * const address = await host.listen({ hostname: "127.0.0.1", port: 0 });
 * const health = await fetch(`${address.url}/health`);
 * assert.equal((await health.json()).status, "ok");
 * await host.close();
 * ```
 */
export interface ListenOptions {
  /** The interface to listen on. @default the config's `listen.hostname` */
  hostname?: string;
  /** 0 picks a free port. @default the config's `listen.port` */
  port?: number;
}

/**
 * Where a listening host can be reached.
 *
 * @example Connect a client where the host listens
 * ```ts
 * import { createHost } from "./host.ts";
 * import { connect } from "../client/mod.ts";
 * import assert from "node:assert/strict";
 * const host = createHost({ capabilities: [], config: { listen: { port: 0 } } });
 * const { hostname, port, url } = await host.listen();
 * assert.equal(hostname, "127.0.0.1");
 * assert.notEqual(port, 0);
 * assert.equal(url, `http://127.0.0.1:${port}`);
 * const client = await connect(`${url.replace(/^http/, "ws")}/a2e`);
 * assert.equal(host.sessionCount, 1);
 * await client.close();
 * await host.close();
 * ```
 */
export interface ListenAddress {
  /** The interface the host listens on. */
  hostname: string;
  /** The TCP port it listens on (the one picked, when asked for 0). */
  port: number;
  /** `http://hostname:port` */
  url: string;
}

/** What {@link httpApp} routes to. */
export interface HttpParts {
  /** The host as transports see it. */
  context: TransportContext;
  /** A2E over HTTP+SSE, under `/a2e`. */
  sse: SseTransport;
  /** MCP over Streamable HTTP, at `/mcp`. */
  mcp: McpHttp;
  /** The console and metrics, at the root. */
  operator: { app: Hono };
  /** The live sessions, counted by `/health`. */
  sessions: ReadonlySet<unknown>;
  /** When the host started (`performance.now()`), for `/health`'s uptime. */
  startedAt: number;
  /** Receives a line for each request a route failed. */
  log: (message: string) => void;
}

/**
 * The host's HTTP handler: `/health`, A2E over WebSocket and HTTP+SSE
 * (`/a2e`), MCP (`/mcp`) and the operator's routes; a route that throws
 * answers 500 and is logged.
 *
 * @param parts the transports and views it routes to
 * @returns the Hono app
 * @example `/health` counts the live sessions
 * ```ts
 * import { httpApp } from "./host_http.ts";
 * import { Hono } from "hono";
 * import assert from "node:assert/strict";
 * const none = new Hono();
 * const app = httpApp({
 *   context: {} as never, sse: { app: none } as never, mcp: {} as never,
 *   operator: { app: none }, sessions: new Set([1, 2]), startedAt: 0,
 *   log: () => {},
 * });
 * const health = await (await app.fetch(new Request("http://x/health"))).json();
 * assert.equal(health.sessions, 2);
 * ```
 */
export function httpApp(parts: HttpParts): Hono {
  const { sessions, startedAt, log } = parts;
  const app = new Hono();
  app.get("/health", (c) =>
    c.json({
      status: "ok",
      sessions: sessions.size,
      uptime_seconds: (performance.now() - startedAt) / 1000,
    }));
  app.get("/a2e", websocketHandler(parts.context));
  app.route("/a2e", parts.sse.app);
  app.all("/mcp", (c) => parts.mcp.handle(c.req.raw));
  app.route("/", parts.operator.app);
  app.onError((error, c) => failed(log, c.req.method, c.req.path, error));
  return app;
}

/**
 * The host's HTTP handler: `app`, with requests to `/mcp` handed to the MCP
 * endpoint straight away. Every MCP call is a POST to `/mcp`, and Hono's
 * routing and context cost it about 7 µs; the MCP endpoint applies its own
 * checks (bearer token, body size, method), as it did behind Hono's
 * `app.all("/mcp")`, and the host's door (`runtime/doors/guard.ts`), which
 * wraps this handler, has checked `Host` and `Origin`. What Hono answers its own way still goes through
 * it: HEAD (answered as a GET without body), and a path Hono would decode.
 *
 * @param app the host's Hono app ({@link httpApp}), which routes `/mcp` too
 * @param parts the MCP endpoint, and where a failed request is logged
 * @returns the handler for `Deno.serve`
 * @example `/mcp` goes to the endpoint, the rest to the app
 * ```ts
 * import { mcpFirst } from "./host_http.ts";
 * import { Hono } from "hono";
 * import assert from "node:assert/strict";
 * const app = new Hono().get("/health", (c) => c.text("ok"));
 * const handle = mcpFirst(app, {
 *   mcp: { handle: () => Promise.resolve(new Response("mcp")) },
 *   log: () => {},
 * });
 * const mcp = await handle(new Request("http://x/mcp?x=1", { method: "POST" }));
 * assert.equal(await mcp.text(), "mcp");
 * assert.equal(await (await handle(new Request("http://x/health"))).text(), "ok");
 * ```
 */
export function mcpFirst(
  app: Hono,
  parts: { mcp: Pick<McpHttp, "handle">; log: (message: string) => void },
): HttpHandler {
  const { mcp, log } = parts;
  // One handler for the POSTs, so that a call makes no closure.
  const postFailed = (error: unknown) => failed(log, "POST", "/mcp", error);
  return (request, info) => {
    const method = request.method;
    // The connection info becomes Hono's env (the WebSocket route reads
    // the client's address from it).
    if (method === "HEAD" || !isMcpPath(request.url)) {
      return app.fetch(request, info);
    }
    const onError = method === "POST"
      ? postFailed
      : (error: unknown) => failed(log, method, "/mcp", error);
    try {
      return mcp.handle(request).catch(onError);
    } catch (error) {
      return onError(error);
    }
  };
}

// Whether Hono would take the URL's path to be "/mcp" without decoding it
// (as its getPath: the path ends at "?" or "#").
function isMcpPath(url: string): boolean {
  const start = url.indexOf("/", url.indexOf(":") + 4);
  if (!url.startsWith("/mcp", start)) return false;
  const next = url.charCodeAt(start + 4);
  return Number.isNaN(next) || next === 63 || next === 35;
}

// A route that threw: 500, and a line for the log. Hono rethrows what is
// not an Error, and so does this. A body the client cut short is its own
// doing: 400, and no line (a client could otherwise write to the log).
function failed(
  log: (message: string) => void,
  method: string,
  path: string,
  error: unknown,
): Response {
  if (!(error instanceof Error)) throw error;
  if (error instanceof BodyReadError) {
    return Response.json({ error: error.message }, { status: 400 });
  }
  log(`Cannot handle ${method} ${path}: ${error.message}`);
  return Response.json({ error: "Internal error" }, { status: 500 });
}

/**
 * The host's TCP listener: listens once (a second call rejects), and shuts
 * down if it did.
 *
 * Deno.serve's accept loop ends at its first failed accept and closes the
 * listening socket: a flood of idle connections that takes every file
 * descriptor the process may open (EMFILE) does that, and the rejection of
 * the server's `finished` would end the host with every session. Here the
 * sessions already open are served on, and the host listens again on the
 * same address (backing off from 0.1 s to 5 s) until it can; meanwhile a
 * new connection is refused. It says so once per outage through `log`, and
 * again once it has accepted for 10 s.
 *
 * @param defaults where to listen unless `listen` is told otherwise
 * @param fetch the HTTP handler
 * @param log where the listener says it stopped and started accepting
 * @returns `listen`, and `shutdown` for closing
 * @example Listen on a free port, then shut down
 * ```ts
 * import { listener } from "./host_http.ts";
 * import assert from "node:assert/strict";
 * const server = listener(
 *   { hostname: "127.0.0.1", port: 0 },
 *   () => new Response("hi"),
 * );
 * const address = await server.listen();
 * assert.equal(await (await fetch(address.url)).text(), "hi");
 * await assert.rejects(server.listen(), /already listening/);
 * await server.shutdown();
 * ```
 */
export function listener(
  defaults: Pick<ListenConfig, "hostname" | "port">,
  fetch: Deno.ServeHandler,
  log: (message: string) => void = () => {},
): {
  listen(options?: ListenOptions): Promise<ListenAddress>;
  shutdown(): Promise<void>;
} {
  let server: Deno.HttpServer<Deno.NetAddr> | undefined;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Since when the host has not been accepting, while it is not.
  let outageSince: number | undefined;
  let delay = RELISTEN_FIRST_MS;

  const later = (ms: number, then: () => void) => {
    clearTimeout(timer);
    timer = setTimeout(then, ms);
    // A host that stops for another reason is not held up by a retry.
    Deno.unrefTimer(timer);
  };
  // Starts a server and watches it: a failed one is replaced.
  const serve = (hostname: string, port: number) => {
    const address = Promise.withResolvers<ListenAddress>();
    const current = Deno.serve({
      hostname,
      port,
      onListen: (addr) => {
        const shown = addr.hostname.includes(":")
          ? `[${addr.hostname}]`
          : addr.hostname;
        address.resolve({
          hostname: addr.hostname,
          port: addr.port,
          url: `http://${shown}:${addr.port}`,
        });
      },
    }, fetch);
    server = current;
    current.finished.catch((error: unknown) => {
      if (stopped || server !== current) return;
      if (outageSince === undefined) {
        outageSince = Date.now();
        delay = RELISTEN_FIRST_MS;
        log(
          `The host stopped accepting connections on ${hostname}:${current.addr.port} (${
            (error as Error)?.message ?? error
          }); sessions already open are served, and it listens again as soon as it can`,
        );
      }
      // The port it had, also when it was asked for any (0).
      retry(hostname, current.addr.port);
    });
    return address.promise;
  };
  const retry = (hostname: string, port: number) => {
    later(delay, () => {
      if (stopped) return;
      try {
        serve(hostname, port);
      } catch {
        // Still no descriptor for a socket, or the port was taken.
        retry(hostname, port);
        return;
      }
      // Accepting again, for now: said once it has lasted.
      later(RELISTEN_HEALTHY_MS, () => {
        if (outageSince === undefined || stopped) return;
        const seconds = ((Date.now() - outageSince) / 1000).toFixed(1);
        outageSince = undefined;
        log(`The host accepts connections again (after ${seconds} s)`);
      });
    });
    delay = Math.min(delay * 2, RELISTEN_MAX_MS);
  };

  return {
    // Async: a second call, or a port Deno.serve cannot take, rejects.
    async listen(options: ListenOptions = {}) {
      if (server) throw new Error("Cannot listen: already listening");
      return await serve(
        options.hostname ?? defaults.hostname,
        options.port ?? defaults.port,
      );
    },
    shutdown: async () => {
      stopped = true;
      clearTimeout(timer);
      await server?.shutdown();
    },
  };
}

// The first wait before listening again after the listener failed, the
// longest between two tries, and how long the host must accept again
// before it says it recovered.
const RELISTEN_FIRST_MS = 100;
const RELISTEN_MAX_MS = 5_000;
const RELISTEN_HEALTHY_MS = 10_000;
