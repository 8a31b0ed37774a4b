/**
 * `createHost()`: the skillbox host as a library. It serves A2E over
 * WebSocket (`/a2e`), HTTP+SSE (`/a2e/session|send|stream|health`) and
 * stdio, MCP (Streamable HTTP at `/mcp`, or stdio), plus `GET /health`, all
 * feeding one dispatcher; and it answers in-process calls through the same
 * handlers.
 *
 * @module
 */

import type { Capability, OutgoingMessage } from "./capability.ts";
import { defaultConfig } from "./config.ts";
import type {
  HostConfig,
  LimitsConfig,
  ListenConfig,
} from "./config_schema.ts";
import { Dispatcher } from "./dispatcher.ts";
import {
  createInProcessTransport,
  type InProcessCalls,
} from "./transports/in_process.ts";
import type { OpenSessionOptions } from "./transports/transport_context.ts";
import { Admission } from "./admission.ts";
import { parseTokenQuotas } from "./quotas.ts";
import {
  createSseTransport,
  type SseTransport,
} from "./transports/http_sse.ts";
import { serveStdio, type StdioOptions } from "./transports/stdio.ts";
import { registryFacts } from "./mcp/tool_mapping.ts";
import { createMcpHttp } from "./mcp/http.ts";
import { serveMcpStdio } from "./mcp/server.ts";
import { createOperatorSurface } from "./console/operator_surface.ts";
import {
  httpApp,
  type ListenAddress,
  listener,
  type ListenOptions,
  mcpFirst,
} from "./host_http.ts";
import { createDoor } from "./doors/guard.ts";
import {
  createStandardCapabilities,
  type McpServersView,
  type StandardCapabilities,
} from "./standard_capabilities.ts";
import type { LoadReport } from "./load_report.ts";
import { printableLine } from "../protocol/lines.ts";

/**
 * Options for {@link createHost}.
 *
 * @example Set one limit; the rest of the config is defaulted
 * ```ts
 * import { createHost } from "./host.ts";
 * import assert from "node:assert/strict";
 * const host = createHost({
 *   config: { tokens: ["s3cret"], limits: { maxParallel: 1 } },
 *   capabilities: [],
 * });
 * assert.equal(host.config.limits.maxParallel, 1);
 * assert.equal(host.config.limits.maxSessions, 1024);
 * assert.equal(host.config.listen.port, 8787);
 * assert.deepEqual(host.config.tokens, ["s3cret"]);
 * await host.close();
 * ```
 */
export interface HostOptions {
  /**
   * The configuration (see `runtime/config.ts`); missing parts take their
   * defaults. @default defaultConfig()
   */
  config?: Partial<Omit<HostConfig, "limits" | "listen">> & {
    limits?: Partial<LimitsConfig>;
    listen?: Partial<ListenConfig>;
  };
  /**
   * Capabilities served from the start. When omitted, the host serves the
   * standard `tools`, `toolkits` and `skill` capabilities over the config's
   * skills folders (see `runtime/standard_capabilities.ts`); pass `[]` to serve none.
   * @default the standard capabilities
   */
  capabilities?: readonly Capability[];
  /** The config file the config came from, kept out of every sandbox. */
  configPath?: string;
  /**
   * Receives diagnostic lines, each one printable line (controls escaped,
   * see `printableLine`): they quote what modules and servers wrote.
   * @default ignore them
   */
  log?: (message: string) => void;
}

/**
 * A running skillbox host. Its `request`, `callTool` and `callSkill` run on
 * the host's trusted in-process session (see {@link InProcessCalls}).
 *
 * @example Count an HTTP+SSE session and push to it
 * ```ts
 * import { createHost } from "./host.ts";
 * import { encodeEvent } from "../protocol/responses.ts";
 * import assert from "node:assert/strict";
 * const host = createHost({ capabilities: [] });
 * assert.equal((await host.ready).tools, 0);
 * const opened = await host.fetch(
 *   new Request("http://127.0.0.1:8787/a2e/session", { method: "POST" }),
 * );
 * assert.equal(typeof (await opened.json()).session_id, "string");
 * assert.equal(host.sessionCount, 1);
 * const push = encodeEvent("invoke/event", null, {
 *   kind: "tools.changed",
 *   data: {},
 *   seq: 1,
 * });
 * assert.equal(host.broadcast(push), 1);
 * await host.close();
 * assert.equal(host.sessionCount, 0);
 * ```
 */
export interface Host extends InProcessCalls {
  /**
   * The HTTP handler: `Deno.serve(host.fetch)` or mount it in your server.
   * Every request passes the host's door first (`Host`, `Origin`, failed
   * credentials throttled by `info.remoteAddr`, see `runtime/doors/`).
   */
  readonly fetch: (
    request: Request,
    info?: Deno.ServeHandlerInfo,
  ) => Response | Promise<Response>;
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
   * The imported MCP servers (`mcp_servers`). The host does not wait for
   * them: it serves at once, and each server's tools join when it is ready
   * (clients are told, as on a reload).
   */
  readonly mcpServers: McpServersView;
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
 * const health = await host.fetch(new Request("http://localhost/health"));
 * assert.equal((await health.json()).status, "ok");
 * const pong = await host.request({ type: "ping" });
 * assert.equal(pong.type, "pong");
 * await host.close();
 * ```
 */
export function createHost(options: HostOptions = {}): Host {
  // Long: the host's wiring list, one part per statement, each built from
  // the ones above, then the Host naming them; what any part does is a
  // function of its own (Admission, Dispatcher, httpApp, listener,
  // Session.shutdown), and splitting the list would only pass the parts
  // around.
  const config = fullConfig(options.config);
  const given = options.log;
  const log = given ? (line: string) => given(printableLine(line)) : () => {};
  const startedAt = performance.now();
  // The run history, metrics and console; its views of sessions, sandboxes
  // and in-process requests are read only when asked, after all exist.
  const operator = createOperatorSurface({
    // Embedder-given capabilities do not report runs: keep no history then.
    config: options.capabilities ? { ...config, store: null } : config,
    log,
    sessions: () => sessions,
    processes: () => stack?.processes() ?? [],
    registryStatus: () => stack?.registryStatus() ?? null,
    request: (message) => local.request(message),
  });
  const stack: StandardCapabilities | null = options.capabilities
    ? null
    : createStandardCapabilities(config, {
      // To the sessions admission holds, made below.
      broadcast: (message) => admission.broadcast(message),
      log,
      configPath: options.configPath,
      observer: operator.recorder,
      // run_code's inner calls count against the session's quota and
      // slots as its direct calls do; the dispatcher is made below.
      admitInner: (session, slot) => dispatcher.admitInner(session, slot),
    });
  // Embedder-given capabilities: nothing loaded from folders.
  const ready: Promise<LoadReport> = stack?.ready ?? Promise.resolve({
    tools: 0,
    toolkits: 0,
    skills: 0,
    dirs: [],
    errors: [],
    warnings: [],
  });
  ready.catch(() => {});
  const mcpServers: McpServersView = stack?.mcpServers ??
    { ready: ready.then(() => {}), starting: () => [] };
  mcpServers.ready.catch(() => {});
  // The one door in front of every route and upgrade, in-process or not;
  // it also throttles the tokens handshakes present, by client address.
  const door = createDoor({ listen: config.listen, tokens: config.tokens });
  let closing = false;
  const quotas = parseTokenQuotas(config.policy, config.tokens);
  const admission = new Admission({
    config,
    quotas,
    // Nothing the session ran stays alive (its eval processes).
    endSession: (id) => stack?.endSession(id),
    closing: () => closing,
  });
  const { sessions } = admission;
  const dispatcher = new Dispatcher({
    capabilities: options.capabilities ?? stack?.capabilities,
    tokens: config.tokens,
    maxMessageBytes: config.limits.maxMessageBytes,
    maxParallelHost: config.limits.maxParallelHost,
    startedAt,
    quotas,
    // The token first, throttled by the client's address; then the limits.
    accept: (session, token) =>
      door.checkToken(session.client, token) || admission.admit(session, token),
  });
  const context = {
    dispatcher,
    limits: config.limits,
    admitSession: (open: OpenSessionOptions) => admission.open(open),
    log,
  };
  const sse: SseTransport = createSseTransport(context);
  const mcpOptions = {
    facts: registryFacts(() => stack?.snapshot ?? null),
    remoteSkills: () => stack?.remoteSkills() ?? [],
  };
  const mcp = createMcpHttp(context, { ...mcpOptions, tokens: config.tokens });
  const app = httpApp({
    context,
    sse,
    mcp,
    operator,
    sessions,
    startedAt,
    log,
  });
  const local = createInProcessTransport({
    dispatcher,
    maxParallel: config.limits.maxParallel,
    closing: () => closing,
  });
  const handle = door.guard(mcpFirst(app, { mcp, log }));
  const server = listener(config.listen, handle, log);

  const host: Host = {
    fetch: handle,
    config,
    get capabilities() {
      return dispatcher.capabilities.map((c) => c.name);
    },
    get sessionCount() {
      return sessions.size;
    },
    ready,
    mcpServers,
    listen(listenOptions = {}) {
      door.listeningOn(listenOptions.hostname ?? config.listen.hostname);
      return server.listen(listenOptions);
    },
    serveStdio: (stdioOptions) => serveStdio(context, stdioOptions),
    serveMcpStdio: () => serveMcpStdio(context, mcpOptions),
    addCapability: (capability) => dispatcher.addCapability(capability),
    broadcast: (message) => admission.broadcast(message),
    request: local.request,
    callTool: local.callTool,
    callSkill: local.callSkill,
    async close(closeOptions = {}) {
      if (closing) return;
      closing = true;
      const timeoutMs =
        (closeOptions.timeoutSeconds ?? config.limits.shutdownTimeoutSeconds) *
        1000;
      // All refuse new calls at once; each closes once its calls ended.
      const all = [...sessions, local.session];
      await Promise.all(all.map((s) => s.shutdown(timeoutMs, "Host closing")));
      sse.close();
      await mcp.close();
      await dispatcher.closeCapabilities();
      await stack?.close();
      await operator.close();
      await server.shutdown();
    },
  };
  return host;
}

/** The given configuration with every missing part defaulted. */
function fullConfig(given: HostOptions["config"] = {}): HostConfig {
  const base = defaultConfig();
  return {
    ...base,
    ...given,
    listen: { ...base.listen, ...given.listen },
    limits: { ...base.limits, ...given.limits },
  };
}
