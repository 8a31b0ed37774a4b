/**
 * Imported MCP servers (`mcp_servers` in `skillbox.jsonc`): one official-SDK
 * `Client` per server, stdio ones started through {@link mcpServerCommand},
 * HTTP ones over Streamable HTTP through the egress broker's address rules,
 * with their headers sent only to their URL's origin.
 * Each server becomes registry modules (a toolkit `<name>` of origin `mcp`
 * and tools `<name>__<tool>`), and the tool caller sends their calls here
 * (see "Routing calls"); they come back as sandbox outcomes, so the call
 * path (policy, validation, timeouts, events) is the same as for any tool.
 * Servers start in the background: the host serves
 * at once, and a server's tools join the registry when it is ready (the
 * registry's reload tells clients, `tools.changed` and MCP `list_changed`).
 * A server that fails to start or crashes is listed unavailable with the
 * reason and retried in the background with backoff (see "A server's slot");
 * its calls fail at once with `tool_error` saying when the next attempt is,
 * or wait for a start already under way. Its image, audio and resource
 * content becomes artifact events (bounded by `maxResultBytes`), which MCP
 * clients get back as content of the same type. Its entry's `env` and
 * `headers` values, its URL's credentials and its secret-named `args` are
 * operator secrets: scrubbed from all the server says (see "A server's
 * secrets").
 *
 * ## A server's slot
 *
 * One imported MCP server's state between calls: its client while it runs,
 * its tools, and, while it does not run, why not and when the next start is
 * due. Starts that fail, and crashes soon after a start, back off: the
 * first retry after `initialMs`, doubling up to `maxMs`, each wait shortened
 * by up to a fifth at random so that many servers do not retry in step. A
 * server that crashes after running for `stableMs` restarts at once, and its
 * backoff starts over.
 *
 * ## A server's registry module
 *
 * How an imported MCP server is listed in the registry: one module per
 * server, at a path under {@link MCP_PATH_PREFIX}.
 *
 * ## Routing calls
 *
 * The imported servers are a hosted tool of the tool caller
 * (`ToolCallerOptions.imported`): the caller sends them the call of an
 * entry of origin `mcp` (only {@link serverModule} makes those), past every
 * check of the one call path, and the call is made on the server its
 * module path names (`/mcp:/<name>`). No other call enters this module: a
 * drop-in's stops at its entry's origin, wherever its file is and whatever
 * its name.
 *
 * ## A server's secrets
 *
 * The operator secrets an imported MCP server's entry holds: the values of
 * a stdio server's `env` and of a URL server's `headers` (and the
 * credential after an `Authorization` scheme such as `Bearer`), the URL's
 * user name, password and query values (`?key=...`), and of a stdio
 * server's `args` the value of each flag or `NAME=value` whose name holds
 * `key`, `token`, `secret`, `password`, `passwd`, `auth` or `credential`
 * (`--api-key X`, `--token=X`, `API_KEY=X`); other args (paths, package
 * names) stay readable (`serverSecrets`). They are
 * redacted wherever operator secrets are: what the server says (its stderr
 * tail in the "unavailable" reason, its errors, its tool listings and
 * results, its progress) is scrubbed here before it reaches clients, the
 * console, the log or the run history, and the host's run redactor gets
 * them too (`operatorSecrets`).
 *
 * Values too short or too common to be credentials are left out, since
 * scrubbing them would garble ordinary text: under 4 characters (`1`,
 * `on`, a port digit) and the words `true`, `false`, `null`, `none`,
 * `yes`, `no`, `off`.
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  ErrorCode,
  type JSONRPCMessage,
  McpError,
  type Progress,
  ResourceListChangedNotificationSchema,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type {
  Transport,
  TransportSendOptions,
} from "@modelcontextprotocol/sdk/shared/transport.js";
import type { LoadedModule } from "../registry/snapshot.ts";
import type { DescribedDefinition, SandboxOutcome } from "../sandbox/types.ts";
import type { HostedCall, HostedTool } from "../tools/call.ts";
import {
  type ConfinementStatus,
  detectConfinement,
} from "../confine/confine.ts";
import { checkedFetch, EgressBroker } from "../egress/broker.ts";
import {
  type McpProcessSpec,
  ProcessClientTransport,
} from "./imported_process.ts";
import {
  type ImportedSkill,
  loadServerSkills,
  type PageBounds,
  type Pages,
  readBytes,
  readPages,
  type RefusedSkill,
} from "./imported_skills.ts";
import type { RemoteSkill } from "./skills_extension.ts";
import { SERVER_VERSION } from "./server.ts";
import { CallSignal, raceAbort } from "../deadline.ts";
import {
  basicAuthOf,
  scrubSecrets,
  serverSecrets,
} from "../toolkits/secrets.ts";
import { isPlainObject } from "../../protocol/json.ts";
import {
  ConversionBudget,
  schemaToParameters,
} from "../../protocol/parameters.ts";
import { MAX_MESSAGE_CHARS } from "../../protocol/sandbox/pipe.ts";
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { mcpSchemaValidator } from "../schema/validator.ts";

/**
 * One entry of `mcp_servers`: a stdio command or a Streamable HTTP URL.
 *
 * @example Tell the two kinds of entry apart
 * ```ts
 * import { parseConfig } from "../config.ts";
 * import type { McpServerSpec } from "./imported_servers.ts";
 * import assert from "node:assert/strict";
 * function describe(spec: McpServerSpec): string {
 *   return spec.url === undefined
 *     ? `stdio: ${spec.command} ${spec.args?.join(" ")}`
 *     : `http: ${spec.url}`;
 * }
 * const { mcpServers = {} } = parseConfig(`{ "mcp_servers": {
 *   "files": { "command": "node", "args": ["/srv/fs/index.js", "/srv/data"] },
 *   "docs": { "url": "https://mcp.example.com/mcp", "start_timeout_ms": 30000 }
 * } }`);
 * assert.equal(describe(mcpServers.files!), "stdio: node /srv/fs/index.js /srv/data");
 * assert.equal(describe(mcpServers.docs!), "http: https://mcp.example.com/mcp");
 * assert.equal(mcpServers.docs?.startTimeoutMs, 30000);
 * ```
 */
export type McpServerSpec =
  & {
    /** How long it may take to start and list its tools. @default 10000 */
    startTimeoutMs?: number;
  }
  & (
    | (McpProcessSpec & { url?: undefined })
    | { url: string; headers?: Readonly<Record<string, string>> }
  );

/** Options of {@link createImportedServers}. */
export interface ImportedServersOptions {
  /** The servers, by toolkit name. */
  servers: Readonly<Record<string, McpServerSpec>>;
  /** How long a server may take to start and list its tools. @default 10000 */
  startTimeoutMs?: number;
  /**
   * Called when a server's tools or availability changed; a server that
   * came up is logged ready once the promise it returns settles (the
   * registry took its tools).
   */
  onChange?: () => void | Promise<void>;
  /** Receives diagnostic lines. */
  log?: (line: string) => void;
  /**
   * The host's OS confinement (the sandbox's): stdio servers run inside it
   * when active, and do not start when it is `"required"` but unavailable.
   * @default detectConfinement("auto")
   */
  confinement?: () => Promise<ConfinementStatus>;
  /**
   * Checks the addresses HTTP servers are reached at (the host's broker:
   * its `allow_private_hosts` is how a loopback or private server is
   * allowed). @default a broker that allows only public addresses
   */
  egress?: Pick<EgressBroker, "checkTarget">;
  /**
   * How long one HTTP request to a URL server may take, headers and body:
   * a call's POST (which the MCP SDK never aborts when the call times out)
   * or the listening stream (which the SDK then opens again). Keep it
   * above the longest call the policy allows. @default 600000
   */
  requestTimeoutMs?: number;
  /** How failed servers' retries back off. @default DEFAULT_BACKOFF */
  backoff?: Partial<Backoff>;
  /**
   * The most bytes of image, audio and resource content one call passes
   * on (each item's artifact event counted as JSON, its base64 with it);
   * what does not fit is left out, said in a note, and the result marked
   * truncated. Its value (text or structured content) is cut to as many
   * characters of JSON. @default 1048576
   */
  maxResultBytes?: number;
  /**
   * The timers retries and the pauses between relists wait on (tests drive
   * them). @default globalThis's
   */
  timers?: RetryTimers;
  /** The jitter's random source (tests fix it). @default Math.random */
  random?: () => number;
}

/** The timers background retries use. */
export interface RetryTimers {
  /** Calls `fn` after `ms`; returns a handle for {@link clear}. */
  set(fn: () => void, ms: number): unknown;
  /** Cancels a timer set by {@link set}. */
  clear(handle: unknown): void;
}

const GLOBAL_TIMERS: RetryTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as number),
};

/** One routed call. */
export interface ImportedCall {
  timeoutMs: number;
  signal?: AbortSignal;
  onEvent(kind: string, data: Record<string, unknown>): void;
}

/**
 * Creates the imported servers.
 *
 * @param options the servers and hooks
 * @returns the servers, not started
 * @example A server that cannot start is listed unavailable
 * ```ts
 * import { createImportedServers } from "./imported_servers.ts";
 * import assert from "node:assert/strict";
 * const servers = createImportedServers({ servers: { ghost: { command: "/nonexistent" } } });
 * await servers.start();
 * assert.deepEqual(servers.starting(), []);
 * const kit = servers.modules()[0]!.module.definitions[0]!;
 * assert.match(String(kit.fields.description), /unavailable/);
 * await servers.close();
 * ```
 */
export function createImportedServers(
  options: ImportedServersOptions,
): ImportedServers {
  return new ImportedServers(options);
}

/**
 * The imported servers; as a hosted tool, they run the calls of their
 * tools' registry entries (origin `mcp`) for the tool caller.
 *
 * @example A call to a server that is not configured fails, never throws
 * ```ts
 * import { ImportedServers } from "./imported_servers.ts";
 * import assert from "node:assert/strict";
 * const servers = new ImportedServers({ servers: {} });
 * const outcome = await servers.call("ghost", "t", {}, { timeoutMs: 1000, onEvent() {} });
 * assert.deepEqual(outcome.ok ? "" : outcome.message, 'Unknown MCP server "ghost"');
 * await servers.close();
 * ```
 */
export class ImportedServers implements HostedTool {
  #options: ImportedServersOptions;
  #startTimeoutMs: number;
  #slots = new Map<string, ServerSlot>();
  #closed = false;
  // The digest of each server's last tool listing (see listAll).
  #listed = new Map<ServerSlot, string>();
  #detected: Promise<ConfinementStatus> | null = null;
  #egress: Pick<EgressBroker, "checkTarget">;
  #timers: RetryTimers;
  #maxResultBytes: number;
  #first: Promise<void> | null = null;
  // The pauses between relists under way, ended when the host closes.
  #pauses = new Set<() => void>();

  /** @param options the servers and hooks */
  constructor(options: ImportedServersOptions) {
    this.#options = options;
    this.#startTimeoutMs = options.startTimeoutMs ?? 10_000;
    const backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    for (const [name, spec] of Object.entries(options.servers)) {
      this.#slots.set(
        name,
        new ServerSlot(name, spec, { backoff, random: options.random }),
      );
    }
    this.#egress = options.egress ?? new EgressBroker();
    this.#timers = options.timers ?? GLOBAL_TIMERS;
    this.#maxResultBytes = options.maxResultBytes ?? 1024 * 1024;
  }

  /**
   * Starts every server in the background; resolves once each has come up
   * or failed its first attempt. Each request of a start (the connection,
   * every page of its listings, every skill file it serves) is bounded by
   * its start timeout, not the start as a whole: a server that answers each
   * slowly delays only its own tools. The host does not wait for it; failed
   * servers keep retrying until `close`.
   *
   * @returns resolves once each server came up or failed once
   */
  start(): Promise<void> {
    if (this.#first === null && this.#slots.size > 0) {
      this.#options.log?.(
        `MCP servers starting in the background: ${
          [...this.#slots.keys()].join(", ")
        } (each one's tools join when it is ready)`,
      );
    }
    this.#first ??= Promise.all(
      [...this.#slots.values()].map((s) => this.#connect(s)),
    ).then(() => {});
    return this.#first;
  }

  /** @returns the names of the servers not yet up after their first attempt */
  starting(): string[] {
    const slots = [...this.#slots.values()];
    return slots.filter((s) => s.logged === null).map((s) => s.name);
  }

  /** @returns the registry modules: one per server */
  modules(): LoadedModule[] {
    const names = [...this.#slots.keys()];
    return [...this.#slots.values()].map((slot) =>
      serverModule(slot, { servers: names })
    );
  }

  /** @returns the verified skills of the running servers, served again over MCP */
  remoteSkills(): RemoteSkill[] {
    return [...this.#slots.values()].flatMap((slot) => {
      const client = slot.client;
      if (!client) return [];
      return slot.skills.map((skill): RemoteSkill => ({
        name: importedName(slot.name, skill.name),
        server: slot.name,
        entry: skill.entry,
        read: async (uri, signal) => {
          const timeout = this.#timeoutOf(slot);
          const bytes = await readBytes(client, uri, timeout, signal)
            .catch((error: Error) => {
              // The server's own words: they may say its secrets back.
              throw new Error(said(error.message, slot.secrets));
            });
          // What a server says reaches clients scrubbed of its entry's
          // secrets; a file the scrub would change is refused instead.
          const text = new TextDecoder().decode(bytes);
          if (scrubSecrets(text, slot.secrets) !== text) {
            throw new Error(
              `Resource "${uri}" of the MCP server "${slot.name}" holds one of its secrets (a value of its env or headers, its URL's credentials or a secret arg)`,
            );
          }
          return bytes;
        },
      }));
    });
  }

  /**
   * Runs the call of one of their tools' registry entries on its server.
   *
   * @param hosted the call and its hooks
   * @returns the outcome; never throws
   */
  run({ call, hooks }: HostedCall): Promise<SandboxOutcome> {
    // The SDK keeps a listener on the signal it is given for good: give
    // it one of this call's own, not the session's (CallSignal).
    const follower = hooks.signal ? new CallSignal(hooks.signal) : undefined;
    return this.call(
      call.path.slice(MCP_PATH_PREFIX.length),
      call.export,
      call.args,
      {
        timeoutMs: call.timeoutMs,
        signal: follower?.signal,
        onEvent: (kind, data) => hooks.onEvent(kind, data),
      },
    ).finally(() => follower?.release());
  }

  /**
   * Calls a server's tool; never throws.
   *
   * @param server the server's name
   * @param tool the tool's name on it
   * @param args the arguments
   * @param call its timeout, signal and event sink
   * @returns the outcome
   */
  async call(
    server: string,
    tool: string,
    args: unknown,
    call: ImportedCall,
  ): Promise<SandboxOutcome> {
    const slot = this.#slots.get(server);
    if (!slot) return failure(`Unknown MCP server "${server}"`);
    const outcome = scrubSecrets(
      await this.#call(slot, tool, args, call),
      slot.secrets,
    );
    // As a sandbox tool's failure is cut, after the scrub (cut first, a
    // secret across the cut would leave its start).
    return outcome.ok
      ? outcome
      : { ...outcome, message: outcome.message.slice(0, MAX_MESSAGE_CHARS) };
  }

  async #call(
    slot: ServerSlot,
    tool: string,
    args: unknown,
    call: ImportedCall,
  ): Promise<SandboxOutcome> {
    const server = slot.name;
    const client = slot.client ?? await this.#restart(slot, call.signal);
    if (!(client instanceof Client)) return client;
    try {
      const result = await client.callTool(
        { name: tool, arguments: args as Record<string, unknown> },
        undefined,
        {
          signal: call.signal,
          timeout: call.timeoutMs,
          onprogress: (p: Progress) =>
            call.onEvent("progress", {
              pct: p.total ? (p.progress / p.total) * 100 : p.progress,
              message: scrubSecrets(p.message ?? "", slot.secrets),
            }),
        },
      ) as CallToolResult;
      // Scrubbed before a text resource is made base64, where the scrub
      // would no longer see its secrets; its events again, as their names
      // are decoded from URIs, and they go out before the outcome.
      return outcomeOf(scrubSecrets(result, slot.secrets), {
        maxBytes: this.#maxResultBytes,
        onEvent: (kind, data) =>
          call.onEvent(kind, scrubSecrets(data, slot.secrets)),
      });
    } catch (error) {
      const message = (error as Error).message;
      // The SDK's own timeout (or a signal's reason saying so); an error
      // the server answered is its own, whatever its words say.
      const answered = error instanceof McpError &&
        (error as McpError).code !== ErrorCode.RequestTimeout;
      if (!answered && /timed out/i.test(message)) {
        return {
          ok: false,
          code: "timeout",
          message:
            `MCP tool "${tool}" of server "${server}" timed out after ${call.timeoutMs} ms`,
          retryable: true,
        };
      }
      // A call cut short by the server's end says why it ended.
      const down = slot.client !== client && slot.reason !== ""
        ? ` (${slot.reason})`
        : "";
      return failure(`MCP server "${server}": ${message}${down}`);
    }
  }

  /** Stops every server. */
  async close(): Promise<void> {
    this.#closed = true;
    const slots = [...this.#slots.values()];
    for (const slot of slots) this.#unschedule(slot);
    for (const end of this.#pauses) end();
    // A start under way is cut short: its process is killed.
    await Promise.allSettled(slots.map((s) => s.connecting?.close()));
    await Promise.allSettled(slots.map((s) => s.starting));
    await Promise.allSettled(slots.map((s) => s.client?.close()));
  }

  // A call to a server that is down: it shares a start under way (bounded
  // by the call's signal; each request of the start by the start timeout),
  // starts it when its next attempt is due, and otherwise fails at once
  // saying when that is.
  async #restart(
    slot: ServerSlot,
    signal: AbortSignal | undefined,
  ): Promise<Client | SandboxOutcome> {
    const wait = slot.waitMs(Date.now());
    if (slot.starting === null && wait > 0) {
      return failure(
        `MCP server "${slot.name}" is unavailable: ${slot.reason}; next attempt in ${
          Math.ceil(wait / 1000)
        } s`,
      );
    }
    const started = this.#connect(slot);
    // A start never rejects: only the signal's abort is swallowed here.
    await (signal ? raceAbort(started, signal).catch(() => {}) : started);
    if (signal?.aborted) {
      return failure(`MCP server "${slot.name}" is still starting`);
    }
    return slot.client ??
      failure(`MCP server "${slot.name}" is unavailable: ${slot.reason}`);
  }

  #connect(slot: ServerSlot): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#unschedule(slot);
    slot.starting ??= this.#startSlot(slot).finally(() => {
      slot.starting = null;
      slot.connecting = null;
      if (slot.client === null) this.#schedule(slot);
    });
    return slot.starting;
  }

  // The next attempt of a server that is down, on one timer.
  #schedule(slot: ServerSlot): void {
    if (this.#closed || slot.client || slot.starting || slot.timer) return;
    const wait = Math.max(0, slot.waitMs(Date.now()));
    slot.timer = this.#timers.set(() => {
      slot.timer = undefined;
      this.#connect(slot).catch(() => {});
    }, wait);
  }

  #unschedule(slot: ServerSlot): void {
    if (slot.timer === undefined) return;
    this.#timers.clear(slot.timer);
    slot.timer = undefined;
  }

  async #startSlot(slot: ServerSlot): Promise<void> {
    const timeout = this.#timeoutOf(slot);
    const client = new Client({ name: "skillbox", version: SERVER_VERSION }, {
      // It checks structured results against the server's output schema on
      // this thread: bounded, and without the server's regexes.
      jsonSchemaValidator: mcpSchemaValidator(withoutRegexes),
    });
    let transport: Transport | null = null;
    const was = slot.reason;
    if (slot.logged !== null) slot.reason = `restarting (${was})`;
    try {
      transport = await this.#transportFor(slot.spec);
      if (this.#closed) throw new Error("The host is closing");
      slot.connecting = transport;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        this.#refresh(slot, client).catch(() => {});
      });
      client.setNotificationHandler(
        ResourceListChangedNotificationSchema,
        () => {
          this.#refreshSkills(slot, client).catch(() => {});
        },
      );
      await client.connect(transport, { timeout });
      const connected = transport;
      // Taken before the skills are read: a relist on a list_changed
      // meanwhile ends later, with the newer listing.
      this.#take(slot, await listAll(client, timeout));
      await this.#loadSkills(slot, client, timeout);
      if (this.#closed) throw new Error("The host is closing");
      client.onclose = () => {
        // Closed by the host: nothing to report or restart.
        if (this.#closed) return;
        const fault = connected instanceof ProcessClientTransport
          ? connected.fault
          : "";
        const reason = fault || `the server exited${stderrOf(connected)}`;
        if (!slot.exited(client, reason, Date.now())) return;
        this.#note(slot, "down", true);
        this.#changed();
        this.#schedule(slot);
      };
      slot.started(client, Date.now());
      // "Ready" once its tools are served: after the registry took them.
      await this.#changed();
      this.#note(slot, "up");
    } catch (error) {
      await client.close().catch(() => {});
      await transport?.close().catch(() => {});
      slot.failed(
        `${(error as Error).message}${stderrOf(transport)}`,
        Date.now(),
      );
      // Not per attempt: a server failing forever reloads nothing. Logged
      // once the registry lists it down, as "ready" once it lists its tools:
      // whoever acts on the line finds the reason in the toolkit list.
      if (!this.#closed && slot.logged !== "down") {
        await this.#changed();
        if (!this.#closed) this.#note(slot, "down");
      }
    }
  }

  // One line per change of state, not per attempt: a server that fails
  // forever is logged once.
  #note(slot: ServerSlot, state: "up" | "down", crashed = false): void {
    if (slot.logged === state) return;
    slot.logged = state;
    const { initialMs, maxMs } = slot.backoff;
    this.#options.log?.(
      state === "up"
        ? `MCP server "${slot.name}" is ready: ${slot.tools.length} tool(s), ${slot.skills.length} skill(s)`
        : `MCP server "${slot.name}"${
          crashed ? ":" : " failed:"
        } ${slot.reason}; retrying in the background (${
          seconds(initialMs)
        } doubling up to ${seconds(maxMs)})`,
    );
  }

  // Lists again on a server's `list_changed`: the notifications arriving
  // while a listing is under way, or in the RELIST_SPACING_MS pause after
  // it, are owed one listing after that (the latest's: its client), however
  // many they are, and whether that listing failed or not. A server
  // sending thousands, or alternating two listings with one after each,
  // would otherwise have the host list, convert and reload back to back.
  async #relist(
    slot: ServerSlot,
    what: "tools" | "skills",
    list: () => Promise<void>,
  ): Promise<void> {
    const busy = slot.relisting.has(what);
    slot.relisting.set(what, list);
    if (busy) return;
    for (let owed; (owed = slot.relisting.get(what)) && !this.#closed;) {
      slot.relisting.set(what, null);
      await owed().catch(() => {});
      await this.#pause(RELIST_SPACING_MS);
    }
    slot.relisting.delete(what);
  }

  // Resolves after `ms` on the host's timers, or once the host closes.
  #pause(ms: number): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const end = () => {
        this.#pauses.delete(end);
        this.#timers.clear(handle);
        resolve();
      };
      const handle = this.#timers.set(end, ms);
      this.#pauses.add(end);
    });
  }

  #refresh(slot: ServerSlot, client: Client): Promise<void> {
    return this.#relist(slot, "tools", async () => {
      const listing = await listAll(client, this.#timeoutOf(slot));
      // A reload scans every skills folder: not for the same listing.
      if (listing.digest === this.#listed.get(slot)) return;
      this.#take(slot, listing);
      this.#changed();
    });
  }

  // Keeps the tools of a listing that converting affords, and its digest;
  // says what was left out: the operator sees them missing nowhere else.
  #take(slot: ServerSlot, { items: tools, digest, cut }: Pages<McpTool>): void {
    this.#listed.set(slot, digest);
    slot.tools = scrubSecrets(affordable(tools), slot.secrets);
    const costly = tools.length - slot.tools.length;
    slot.leftOut = [
      ...(cut ? [LISTING_CUT] : []),
      ...(costly > 0 ? [`${costly} tool(s) left out: ${LEFT_OUT}`] : []),
    ].join("; ");
    if (slot.leftOut) {
      this.#options.log?.(`MCP server "${slot.name}": ${slot.leftOut}`);
    }
  }

  #refreshSkills(slot: ServerSlot, client: Client): Promise<void> {
    return this.#relist(slot, "skills", async () => {
      const was = [slot.skills, slot.refusedSkills];
      await this.#loadSkills(slot, client, this.#timeoutOf(slot));
      if (isDeepStrictEqual(was, [slot.skills, slot.refusedSkills])) return;
      this.#changed();
    });
  }

  // A server whose skills cannot be listed still serves its tools.
  async #loadSkills(
    slot: ServerSlot,
    client: Client,
    timeout: number,
  ): Promise<void> {
    try {
      const { skills, refused } = await loadServerSkills(client, timeout);
      slot.skills = scrubSecrets(skills, slot.secrets);
      slot.refusedSkills = refused.map((r) => ({
        ...scrubSecrets(r, slot.secrets),
        reason: said(r.reason, slot.secrets),
      }));
    } catch (error) {
      slot.skills = [];
      slot.refusedSkills = [{
        uri: "skills/list",
        reason: said((error as Error).message, slot.secrets),
      }];
    }
    for (const { uri, reason } of slot.refusedSkills) {
      this.#options.log?.(
        `MCP server "${slot.name}": skill "${uri}" refused: ${reason}`,
      );
    }
  }

  // The bound of each request a start makes, and of each listing and read
  // after it: the entry's own, else the host's.
  #timeoutOf(slot: ServerSlot): number {
    return slot.spec.startTimeoutMs ?? this.#startTimeoutMs;
  }

  async #transportFor(spec: McpServerSpec): Promise<Transport> {
    if (spec.url !== undefined) {
      const url = new URL(spec.url);
      // The URL's user name and password go as Basic auth (fetch sends no
      // credentials from a URL), unless the operator set Authorization.
      const basic = basicAuthOf(url);
      url.username = "";
      url.password = "";
      const headers = new Headers(spec.headers);
      if (basic !== null && !headers.has("authorization")) {
        headers.set("authorization", basic);
      }
      // Operator headers go to this origin only: no redirect leaves it.
      const fetch = checkedFetch(this.#egress, {
        origin: url,
        timeoutMs: this.#options.requestTimeoutMs,
      });
      return boundedAnswers(
        new StreamableHTTPClientTransport(url, {
          requestInit: { headers },
          fetch: async (input: string | URL, init?: RequestInit) =>
            boundedBody(await fetch(input, init)),
        }),
      );
    }
    // Detected once, on the first stdio start, unless the host says.
    const status = await (this.#options.confinement?.() ??
      (this.#detected ??= detectConfinement("auto")));
    if (status.mode === "required" && !status.active) {
      throw new Error(
        `sandbox.confinement is "required" but ${status.reason}; the server was not started`,
      );
    }
    return new ProcessClientTransport(spec, status.layout);
  }

  async #changed(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#options.onChange?.();
    } catch {
      // The registry reports its own failures.
    }
  }
}

/** The least time between two listings of a server's tools (or skills). */
const RELIST_SPACING_MS = 1000;

/** The most answers to an HTTP server's own requests sent at once. */
const MAX_ANSWERS_IN_FLIGHT = 16;

// The SDK answers each request of a server (a ping) with a POST of its
// own, which lasts as long as the server holds it: a server sending
// thousands of pings and answering none of those POSTs held as many of
// the host's sockets, for the whole request timeout. Past
// MAX_ANSWERS_IN_FLIGHT answers under way, another is not sent (the SDK
// reports the send's failure and goes on); the host's own requests and
// notifications are not counted: its calls bound them.
function boundedAnswers(transport: Transport): Transport {
  const send = transport.send.bind(transport);
  let inFlight = 0;
  transport.send = async (
    message: JSONRPCMessage,
    options?: TransportSendOptions,
  ) => {
    if (!("id" in message) || "method" in message) {
      return await send(message, options);
    }
    if (inFlight >= MAX_ANSWERS_IN_FLIGHT) {
      throw new Error(
        `The MCP server holds ${MAX_ANSWERS_IN_FLIGHT} answers to its requests unanswered: not sending another`,
      );
    }
    inFlight++;
    try {
      await send(message, options);
    } finally {
      inFlight--;
    }
  };
  return transport;
}

// The most of a server's tool listing the host keeps: tools, pages read,
// and characters of the tools' JSON.
const MAX_LISTING: PageBounds = { items: 10_000, pages: 100, chars: 16 << 20 };
const LISTING_CUT = `its tool listing goes past ${
  MAX_LISTING.items.toLocaleString("en-US")
} tools, ${MAX_LISTING.pages} pages or ${
  MAX_LISTING.chars >> 20
} MiB of JSON: the rest was not read`;

// The host converts each tool's schemas to parameters on its own thread
// (protocol/parameters.ts), each stopped at its own bound (10,000 steps,
// about 100 ms): thousands of tools at that bound would hold the thread
// for minutes. The listing is read no further once converting it took
// this much work, about a second's (a plain tool takes a few steps).
const MAX_LISTING_CONVERSION = { steps: 100_000, enumValues: 1_000_000 };
// Why a server's tools past MAX_LISTING_CONVERSION are left out.
const LEFT_OUT = `converting their schemas takes more than the listing's ${
  MAX_LISTING_CONVERSION.steps.toLocaleString("en-US")
} steps or ${
  MAX_LISTING_CONVERSION.enumValues.toLocaleString("en-US")
} enum values`;

/** The most bytes one message from an HTTP server may hold. */
const MAX_HTTP_MESSAGE_BYTES = 16 << 20;

// The SDK reads a JSON answer whole (`response.json()`) and an SSE event
// until its blank line: either would take in all a server sends. Past
// MAX_HTTP_MESSAGE_BYTES in one body (JSON) or one event (SSE), the body
// errors, which cancels the server's stream; the request then fails or
// times out as one the server never answered.
function boundedBody(res: Response): Response {
  if (res.body === null) return res;
  const sse = /^text\/event-stream/i.test(
    res.headers.get("content-type") ?? "",
  );
  const max = MAX_HTTP_MESSAGE_BYTES;
  // Bytes since the last event's end, and the last bytes' line ends.
  let since = 0;
  let eol = false;
  let cr = false;
  const bound = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (!sse) {
        since += chunk.byteLength;
      } else {
        for (let i = 0; i < chunk.byteLength; i++) {
          const b = chunk[i]!;
          since++;
          if (b === 0x0a && cr) {
            cr = false; // a CRLF is one line end, counted at its CR
          } else if (b === 0x0a || b === 0x0d) {
            if (eol) since = 0; // a blank line: the event ended
            eol = true;
            cr = b === 0x0d;
          } else {
            eol = cr = false;
          }
        }
      }
      if (since > max) {
        controller.error(
          new Error(`The MCP server sent a message over ${max} bytes`),
        );
        return;
      }
      controller.enqueue(chunk);
    },
  });
  // A Response is a ResponseInit: its status, text and headers carry over.
  return new Response(res.body.pipeThrough(bound), res);
}

// A server's tools as listed, with a digest of what it listed: relisted
// alike, it is neither converted again nor reloaded.
function listAll(client: Client, timeout: number): Promise<Pages<McpTool>> {
  return readPages(async (cursor) => {
    const page = await client.listTools(cursor ? { cursor } : undefined, {
      timeout,
    });
    return { items: page.tools, next: page.nextCursor };
  }, MAX_LISTING);
}

// The tools of a listing up to where converting their schemas spent
// MAX_LISTING_CONVERSION, counted by converting them once here.
function affordable(tools: McpTool[]): McpTool[] {
  const budget = new ConversionBudget(MAX_LISTING_CONVERSION);
  for (const [i, tool] of tools.entries()) {
    for (const schema of [tool.inputSchema, tool.outputSchema]) {
      try {
        schemaToParameters(schema, { budget });
      } catch {
        // Past its own bound, the registry lists it with no parameters.
        if (budget.spent) return tools.slice(0, i);
      }
    }
  }
  return tools;
}

function stderrOf(transport: Transport | null): string {
  const tail = transport instanceof ProcessClientTransport
    ? transport.stderrError
    : "";
  return tail ? ` (stderr: ${tail})` : "";
}

// What a server said, as the host keeps and shows it: scrubbed of its
// secrets, then cut as a sandbox's failure message is.
function said(text: string, secrets: readonly string[]): string {
  return scrubSecrets(text, secrets).slice(0, MAX_MESSAGE_CHARS);
}

function failure(message: string): SandboxOutcome {
  return { ok: false, code: "tool_error", message, retryable: true };
}

function seconds(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** Where {@link outcomeOf} sends non-text content, and its bound. */
interface ContentSink {
  maxBytes: number;
  onEvent(kind: string, data: Record<string, unknown>): void;
}

type Content = CallToolResult["content"][number];

/**
 * A server's call result as a sandbox outcome: its text (or structured
 * content) is the value, cut to `maxBytes` characters of JSON; each image,
 * audio and resource item becomes an `artifact` event (name, mime, base64
 * chunk, final; a resource's `uri`, `link: true` for a `resource_link`,
 * `text: true` for a text resource), up to `maxBytes` of base64 in all.
 */
function outcomeOf(result: CallToolResult, sink: ContentSink): SandboxOutcome {
  const texts: string[] = [];
  const items = result.content as Content[];
  let others = 0;
  let left = sink.maxBytes;
  let cut = false;
  for (const [i, c] of items.entries()) {
    if (c.type === "text") {
      texts.push(c.text);
      continue;
    }
    others++;
    const artifact = artifactOf(c, i);
    if (artifact === null) continue;
    const size = String(artifact.chunk).length;
    // The whole event counts: a link has no base64, and 100,000 of them
    // would otherwise all go out.
    const whole = JSON.stringify(artifact).length;
    if (whole > left) {
      cut = true;
      texts.push(
        `[${c.type} "${artifact.name}" (${artifact.mime}, ${size} bytes of base64) left out: over the ${sink.maxBytes}-byte result limit]`,
      );
      continue;
    }
    left -= whole;
    sink.onEvent("artifact", artifact);
  }
  if (result.isError) {
    return {
      ok: false,
      code: "tool_error",
      // Cut in `call`, once its secrets are scrubbed.
      message: texts.join("\n") || "The MCP tool failed",
      retryable: false,
    };
  }
  // With no other content, texts holds each item's text and nothing else.
  const value = result.structuredContent ??
    (others > 0
      ? texts.join("\n")
      : texts.length === 1
      ? texts[0]
      : result.content);
  // Held to the bound a sandbox tool's result is (`max_result_bytes`, in
  // characters of JSON), cut the same way: a string to its first
  // characters, anything else to the start of its JSON.
  const json = JSON.stringify(value) ?? "null";
  if (json.length <= sink.maxBytes) return { ok: true, value, truncated: cut };
  return {
    ok: true,
    value: typeof value === "string"
      ? value.slice(0, sink.maxBytes)
      : json.slice(0, sink.maxBytes),
    truncated: true,
  };
}

function artifactOf(c: Content, index: number): Record<string, unknown> | null {
  switch (c.type) {
    case "image":
    case "audio":
      return {
        name: `${c.type}-${index + 1}.${extensionOf(c.mimeType)}`,
        mime: c.mimeType,
        chunk: c.data,
        final: true,
      };
    case "resource": {
      const r = c.resource;
      const text = "text" in r && typeof r.text === "string";
      return {
        name: nameOf(r.uri, index),
        mime: r.mimeType ?? (text ? "text/plain" : "application/octet-stream"),
        chunk: text
          ? new TextEncoder().encode(r.text as string).toBase64()
          : String("blob" in r ? r.blob : ""),
        final: true,
        uri: r.uri,
        ...(text ? { text: true } : {}),
      };
    }
    case "resource_link":
      return {
        name: c.name || nameOf(c.uri, index),
        mime: c.mimeType ?? "application/octet-stream",
        chunk: "",
        final: true,
        uri: c.uri,
        link: true,
        ...(c.description ? { description: c.description } : {}),
      };
    default:
      return null;
  }
}

function nameOf(uri: string, index: number): string {
  const last = uri.split(/[/?#]/).filter(Boolean).pop();
  if (!last) return `resource-${index + 1}`;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

function extensionOf(mime: string): string {
  const sub = mime.split("/")[1]?.split(/[;+]/)[0] ?? "";
  return /^[a-z0-9.-]{1,16}$/i.test(sub) ? sub : "bin";
}

/** How an imported server's restarts back off. */
export interface Backoff {
  /** The wait before the first retry. @default 1000 */
  initialMs: number;
  /** The longest wait between two attempts. @default 300000 */
  maxMs: number;
  /**
   * How long a server must have run for a crash to restart it at once and
   * forget the failures before. @default 60000
   */
  stableMs: number;
}

/** The backoff of a server whose entry and `mcp` block say nothing. */
export const DEFAULT_BACKOFF: Backoff = {
  initialMs: 1_000,
  maxMs: 300_000,
  stableMs: 60_000,
};

/**
 * An imported server's state.
 *
 * @example Failed starts back off, doubling
 * ```ts
 * import { ServerSlot } from "./imported_servers.ts";
 * import assert from "node:assert/strict";
 * const slot = new ServerSlot("files", { command: "files-mcp" }, {
 *   backoff: { initialMs: 1000, maxMs: 300_000, stableMs: 60_000 },
 *   random: () => 0,
 * });
 * slot.failed("exit 1", 0);
 * slot.failed("exit 1", 0);
 * assert.equal(slot.waitMs(0), 2000);
 * assert.equal(slot.reason, "exit 1");
 * ```
 */
export class ServerSlot {
  /** The toolkit name. */
  readonly name: string;
  /** How to start or reach it. */
  readonly spec: McpServerSpec;
  /** How its restarts back off. */
  readonly backoff: Backoff;
  /** The connected client, or null while it does not run. */
  client: Client | null = null;
  /** Its tools as last listed. */
  tools: McpTool[] = [];
  /** What of its last listing was left out, and why ("" for nothing). */
  leftOut = "";
  /** Its skills (Skills extension) as last listed and verified. */
  skills: ImportedSkill[] = [];
  /** Its skills refused at the last listing, with why. */
  refusedSkills: RefusedSkill[] = [];
  /** Its entry's secrets (`serverSecrets`), scrubbed from all it says. */
  readonly secrets: readonly string[];
  /** Why it does not run ("" while it does), its secrets scrubbed. */
  reason = "starting";
  /** The start under way, if any: calls arriving meanwhile share it. */
  starting: Promise<void> | null = null;
  /** The transport of the start under way, closed if the host stops. */
  connecting: Transport | null = null;
  /** The timer of the next attempt, while one is due. */
  timer: unknown = undefined;
  /** The state last logged, so a flapping server is logged once. */
  logged: "up" | "down" | null = null;
  #streak = 0;
  #retryAt = 0;
  #upSince = 0;
  #random: () => number;
  /**
   * Per listing under way: the one owed after it, if any (absent: none
   * under way).
   */
  readonly relisting = new Map<
    "tools" | "skills",
    (() => Promise<void>) | null
  >();

  /**
   * @param name the toolkit name
   * @param spec how to start or reach it
   * @param options its backoff, and the random source of the jitter
   */
  constructor(
    name: string,
    spec: McpServerSpec,
    options: { backoff?: Backoff; random?: () => number } = {},
  ) {
    this.name = name;
    this.spec = spec;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.#random = options.random ?? Math.random;
    this.secrets = serverSecrets(spec);
  }

  /**
   * Records a good start.
   *
   * @param client the connected client
   * @param now the time, in ms since the epoch
   */
  started(client: Client, now: number): void {
    this.client = client;
    this.reason = "";
    this.#upSince = now;
  }

  /**
   * Records a failed start: the next one waits longer.
   *
   * @param reason why it failed
   * @param now the time, in ms since the epoch
   */
  failed(reason: string, now: number): void {
    this.client = null;
    this.reason = said(reason, this.secrets);
    this.#backOff(now);
  }

  /**
   * Records that `client` closed, unless it is no longer this slot's. A
   * server that ran for `stableMs` restarts at once; one that crashes
   * sooner backs off as a failed start does.
   *
   * @param client the client that closed
   * @param reason why
   * @param now the time, in ms since the epoch
   * @returns whether the slot changed
   */
  exited(client: Client, reason: string, now: number): boolean {
    if (this.client !== client) return false;
    this.client = null;
    this.reason = said(reason, this.secrets);
    if (now - this.#upSince >= this.backoff.stableMs) this.#streak = 0;
    if (this.#streak === 0) {
      // Once at once; a second early crash backs off.
      this.#streak = 1;
      this.#retryAt = now;
    } else {
      this.#backOff(now);
    }
    return true;
  }

  /**
   * How long a start must still wait (≤ 0: it may be tried now).
   *
   * @param now the time, in ms since the epoch
   * @returns milliseconds
   */
  waitMs(now: number): number {
    return this.#retryAt - now;
  }

  #backOff(now: number): void {
    this.#streak++;
    const { initialMs, maxMs } = this.backoff;
    const full = Math.min(
      maxMs,
      initialMs * 2 ** Math.min(this.#streak - 1, 40),
    );
    // Shortened, never lengthened: the cap holds.
    this.#retryAt = now + Math.round(full * (1 - 0.2 * this.#random()));
  }
}

/**
 * Registry paths of imported servers start with this: absolute (grants are
 * checked on absolute paths) and never a real file.
 */
export const MCP_PATH_PREFIX = "/mcp:/";

const NAME_OK = /[^A-Za-z0-9_.-]/g;

/**
 * The registry name of a server's tool or skill: `<server>__<name>`, cut to
 * what a name may hold.
 *
 * @param server the server's name
 * @param name the tool's or skill's name on it
 * @returns the name
 * @example
 * ```ts
 * import { importedName } from "./imported_servers.ts";
 * import assert from "node:assert/strict";
 * assert.equal(importedName("kit", "wave"), "kit__wave");
 * ```
 */
export function importedName(server: string, name: string): string {
  return `${server}__${name}`.replace(NAME_OK, "_").slice(0, 64);
}

/**
 * An imported server as a registry module: a toolkit named like the server
 * (saying why when it is unavailable), a tool `<server>__<tool>` for each
 * of its tools and a skill `<server>__<skill>` for each of its skills
 * (a refused one listed with why), with a hash that changes when any of
 * that does.
 *
 * Its tools' schemas lose their regular expressions (`pattern`,
 * `patternProperties`): the host validates arguments against them on its
 * own thread, and a server's expression could backtrack for minutes.
 *
 * A tool whose name would fall in another server's namespace (`a` listing
 * `b__c` is `a__b__c`, the tool `c` of a server `a__b`) is left out, and
 * said in the toolkit's description: a name belongs to the longest server
 * name it starts with, so a compromised server cannot take or block
 * another's tools, whichever lists first.
 *
 * @param slot the server's state
 * @param options the names of all the imported servers (none by default)
 * @returns the registry module
 * @example A server that did not start is an unavailable toolkit
 * ```ts
 * import { serverModule } from "./imported_servers.ts";
 * import { ServerSlot } from "./imported_servers.ts";
 * import assert from "node:assert/strict";
 * const loaded = serverModule(new ServerSlot("files", { command: "x" }));
 * assert.equal(loaded.module.path, "/mcp:/files");
 * assert.deepEqual(loaded.module.definitions[0]!.fields.tags, ["mcp", "unavailable"]);
 * ```
 */
export function serverModule(
  slot: ServerSlot,
  options: { servers?: readonly string[] } = {},
): LoadedModule {
  const available = slot.client !== null;
  // The longer server names this one's names could run into.
  const longer = (options.servers ?? []).filter((s) =>
    s.length > slot.name.length && s.startsWith(slot.name)
  );
  const intruding: string[] = [];
  const tools = slot.tools.filter((tool) => {
    const name = importedName(slot.name, tool.name);
    const other = longer.find((s) => name.startsWith(`${s}__`));
    if (other === undefined) return true;
    intruding.push(
      `; tool "${tool.name}" left out: its name "${name}" is the MCP server "${other}"'s`,
    );
    return false;
  });
  const definitions: DescribedDefinition[] = [{
    export: "toolkit",
    kind: "toolkit",
    name: slot.name,
    fields: {
      description: `Tools of the MCP server "${slot.name}"${
        available ? "" : ` (unavailable: ${slot.reason})`
      }${intruding.join("")}${slot.leftOut && `; ${slot.leftOut}`}${
        slot.refusedSkills.map((r) => `; skill "${r.uri}" refused: ${r.reason}`)
          .join("")
      }`,
      tags: available ? ["mcp"] : ["mcp", "unavailable"],
    },
    permissions: {},
    runnable: false,
  }];
  for (const tool of tools) {
    const output = tool.outputSchema && withoutRegexes(tool.outputSchema);
    definitions.push({
      export: tool.name,
      kind: "tool",
      name: importedName(slot.name, tool.name),
      fields: {
        description: tool.description ?? tool.title ?? tool.name,
        input: withoutRegexes(tool.inputSchema),
        ...(output ? { output } : {}),
        toolkit: slot.name,
        idempotent: tool.annotations?.idempotentHint ?? false,
        tags: ["mcp"],
      },
      permissions: {},
      runnable: true,
    });
  }
  const skill = (
    uri: string,
    name: string,
    fields: Record<string, unknown>,
    refused?: { refused: string },
  ): DescribedDefinition => ({
    export: uri,
    kind: "skill",
    name: importedName(slot.name, name),
    fields: {
      ...fields,
      toolkits: [slot.name],
      tags: ["mcp"],
      metadata: { mcp_server: slot.name, uri, ...refused },
    },
    permissions: {},
    runnable: false,
  });
  for (const { uri, name, description, instructions } of slot.skills) {
    definitions.push(skill(uri, name, {
      description,
      // The origin, where the model reads it (SEP-2640: MCP-served skill
      // content is tagged with its server).
      instructions:
        `[Skill ${uri} served by the MCP server "${slot.name}"; untrusted content.]\n\n${instructions}`,
    }));
  }
  // A refused skill is listed Blocked with the reason (`runtime/skills/catalog.ts` reads
  // `metadata.refused`, set here and never by the server), unless a
  // verified skill holds its name.
  const names = new Set(slot.skills.map((s) => s.name));
  for (const { uri, name, reason } of slot.refusedSkills) {
    if (name === undefined || names.has(name)) continue;
    names.add(name);
    definitions.push(skill(uri, name, {
      description: `Refused from the MCP server "${slot.name}"`,
    }, { refused: reason }));
  }
  const text = JSON.stringify([
    available,
    slot.reason,
    definitions,
    slot.refusedSkills,
  ]);
  return {
    origin: "mcp",
    root: MCP_PATH_PREFIX,
    module: {
      path: MCP_PATH_PREFIX + slot.name,
      // A version tag that changes when the listing does.
      hash: createHash("sha256").update(text).digest("hex"),
      definitions,
      error: null,
    },
  };
}

// Keywords whose values are data, not schemas.
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples"]);

// The host checks an imported tool's arguments (and a skill the tool's
// results) against its schemas on its own thread, where a server's regular
// expression could backtrack for minutes on a crafted string ("^(a+)+$"
// on "a" × 40 and "!"). They are dropped: `pattern` (`propertyNames` too)
// and `patternProperties`, with the `additionalProperties` and
// `unevaluatedProperties` beside it, so that the host refuses nothing the
// server's own schema takes; the server checks its own arguments. A
// schema too deep to walk is checked as any object.
function withoutRegexes<T>(schema: T): T | { type: "object" } {
  try {
    return strip(schema) as T;
  } catch {
    return { type: "object" };
  }
}

function strip(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strip);
  if (!isPlainObject(schema)) return schema;
  const patterned = isPlainObject(schema.patternProperties);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "pattern" && typeof value === "string") continue;
    if (
      patterned && (key === "patternProperties" ||
        key === "additionalProperties" || key === "unevaluatedProperties")
    ) continue;
    out[key] = DATA_KEYWORDS.has(key) ? value : strip(value);
  }
  return out;
}
