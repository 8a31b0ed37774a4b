/**
 * Imported MCP servers (`mcp_servers` in `skillbox.jsonc`): one official-SDK
 * `Client` per server, stdio ones started through {@link mcpServerCommand},
 * HTTP ones over Streamable HTTP through the egress broker's address rules,
 * with their headers sent only to their URL's origin.
 * Each server becomes registry modules (a toolkit `<name>` of origin `mcp`
 * and tools `<name>__<tool>`), and calls routed to it come back as sandbox
 * outcomes, so the tool caller (policy, validation, timeouts, events) is the
 * same as for any tool. A server that fails to start, crashes or hangs is
 * listed unavailable with the reason; its calls fail with `tool_error`; the
 * next call restarts it, with backoff after repeated failures. Its entry's
 * `env` and `headers` values are operator secrets: scrubbed from all the
 * server says (`server_secrets.ts`).
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  type Progress,
  ResourceListChangedNotificationSchema,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { LoadedModule } from "../registry/normalize.ts";
import type { SandboxOutcome } from "../sandbox/types.ts";
import {
  type ConfinementStatus,
  detectConfinement,
} from "../confine/confine.ts";
import { EgressBroker } from "../egress/broker.ts";
import { checkedFetch } from "../egress/checked_fetch.ts";
import { ProcessClientTransport } from "./server_process.ts";
import type { McpProcessSpec } from "./server_process.ts";
import { ServerSlot } from "./server_slot.ts";
import { importedName, serverModule } from "./server_module.ts";
import { scrubServer } from "./server_secrets.ts";
import { loadServerSkills, readBytes } from "./imported_skills.ts";
import type { RemoteSkill } from "./skills_extension.ts";

/** One entry of `mcp_servers`: a stdio command or a Streamable HTTP URL. */
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
  /** Called when a server's tools or availability changed. */
  onChange?: () => void;
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
}

/** One routed call. */
export interface ImportedCall {
  timeoutMs: number;
  signal?: AbortSignal;
  onEvent(kind: string, data: Record<string, unknown>): void;
}

/** The imported servers. */
export interface ImportedServers {
  /** Starts every server (bounded by the start timeout each). */
  start(): Promise<void>;
  /** The registry modules: one per server. */
  modules(): LoadedModule[];
  /** Calls a server's tool; never throws. */
  call(
    server: string,
    tool: string,
    args: unknown,
    call: ImportedCall,
  ): Promise<SandboxOutcome>;
  /** The verified skills of the running servers, served again over MCP. */
  remoteSkills(): RemoteSkill[];
  /** Stops every server. */
  close(): Promise<void>;
}

/**
 * Creates the imported servers.
 *
 * @param options the servers and hooks
 * @returns the servers, not started
 * @example A server that cannot start is listed unavailable
 * ```ts
 * import { createImportedServers } from "./imported.ts";
 * import assert from "node:assert/strict";
 * const servers = createImportedServers({ servers: { ghost: { command: "/nonexistent" } } });
 * await servers.start();
 * const kit = servers.modules()[0]!.module.definitions[0]!;
 * assert.match(String(kit.fields.description), /unavailable/);
 * await servers.close();
 * ```
 */
export function createImportedServers(
  options: ImportedServersOptions,
): ImportedServers {
  return new Servers(options);
}

class Servers implements ImportedServers {
  #options: ImportedServersOptions;
  #startTimeoutMs: number;
  #slots = new Map<string, ServerSlot>();
  #closed = false;
  #detected: Promise<ConfinementStatus> | null = null;
  #egress: Pick<EgressBroker, "checkTarget">;

  constructor(options: ImportedServersOptions) {
    this.#options = options;
    this.#startTimeoutMs = options.startTimeoutMs ?? 10_000;
    for (const [name, spec] of Object.entries(options.servers)) {
      this.#slots.set(name, new ServerSlot(name, spec));
    }
    this.#egress = options.egress ?? new EgressBroker();
  }

  async start(): Promise<void> {
    await Promise.all([...this.#slots.values()].map((s) => this.#connect(s)));
  }

  modules(): LoadedModule[] {
    return [...this.#slots.values()].map(serverModule);
  }

  remoteSkills(): RemoteSkill[] {
    const out: RemoteSkill[] = [];
    for (const slot of this.#slots.values()) {
      const client = slot.client;
      if (!client) continue;
      for (const skill of slot.skills) {
        out.push({
          name: importedName(slot.name, skill.name),
          server: slot.name,
          entry: skill.entry,
          read: async (uri) => {
            const bytes = await readBytes(client, uri, this.#startTimeoutMs);
            // What a server says reaches clients scrubbed of its entry's
            // secrets; a file the scrub would change is refused instead.
            const text = new TextDecoder().decode(bytes);
            if (scrubServer(text, slot.secrets) !== text) {
              throw new Error(
                `Resource "${uri}" of the MCP server "${slot.name}" holds a value of its env or headers`,
              );
            }
            return bytes;
          },
        });
      }
    }
    return out;
  }

  async call(
    server: string,
    tool: string,
    args: unknown,
    call: ImportedCall,
  ): Promise<SandboxOutcome> {
    const slot = this.#slots.get(server);
    if (!slot) return failure(`Unknown MCP server "${server}"`);
    return scrubServer(
      await this.#call(slot, tool, args, call),
      slot.secrets,
    );
  }

  async #call(
    slot: ServerSlot,
    tool: string,
    args: unknown,
    call: ImportedCall,
  ): Promise<SandboxOutcome> {
    const server = slot.name;
    const client = slot.client ?? await this.#restart(slot);
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
              message: scrubServer(p.message ?? "", slot.secrets),
            }),
        },
      ) as CallToolResult;
      return outcomeOf(result);
    } catch (error) {
      const message = (error as Error).message;
      if (/timed out/i.test(message)) {
        return {
          ok: false,
          code: "timeout",
          message:
            `MCP tool "${tool}" of server "${server}" timed out after ${call.timeoutMs} ms`,
          retryable: true,
        };
      }
      return failure(`MCP server "${server}": ${message}`);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled(
      [...this.#slots.values()].map((s) => s.client?.close()),
    );
  }

  // A server not running is started for the call, unless it backs off.
  async #restart(slot: ServerSlot): Promise<Client | SandboxOutcome> {
    const wait = slot.waitMs(Date.now());
    if (wait > 0) {
      return failure(
        `MCP server "${slot.name}" is unavailable: ${slot.reason}; next restart in ${wait} ms`,
      );
    }
    await this.#connect(slot);
    return slot.client ??
      failure(`MCP server "${slot.name}" is unavailable: ${slot.reason}`);
  }

  #connect(slot: ServerSlot): Promise<void> {
    slot.starting ??= this.#startSlot(slot).finally(() => {
      slot.starting = null;
    });
    return slot.starting;
  }

  async #startSlot(slot: ServerSlot): Promise<void> {
    const timeout = slot.spec.startTimeoutMs ?? this.#startTimeoutMs;
    const client = new Client({ name: "skillbox", version: "0.1.0" });
    let transport: Transport | null = null;
    try {
      transport = await transportFor(
        slot.spec,
        this.#confinement,
        this.#egress,
      );
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
      slot.tools = scrubServer(await listAll(client, timeout), slot.secrets);
      await this.#loadSkills(slot, client, timeout);
      client.onclose = () => {
        if (!slot.exited(client, `the server exited${stderrOf(connected)}`)) {
          return;
        }
        this.#options.log?.(`MCP server "${slot.name}": ${slot.reason}`);
        this.#changed();
      };
      slot.started(client);
    } catch (error) {
      await client.close().catch(() => {});
      await transport?.close().catch(() => {});
      slot.failed(
        `${(error as Error).message}${stderrOf(transport)}`,
        Date.now(),
      );
      this.#options.log?.(`MCP server "${slot.name}" failed: ${slot.reason}`);
    }
    this.#changed();
  }

  async #refresh(slot: ServerSlot, client: Client): Promise<void> {
    slot.tools = scrubServer(
      await listAll(client, this.#startTimeoutMs),
      slot.secrets,
    );
    this.#changed();
  }

  async #refreshSkills(slot: ServerSlot, client: Client): Promise<void> {
    await this.#loadSkills(slot, client, this.#startTimeoutMs);
    this.#changed();
  }

  // A server whose skills cannot be listed still serves its tools.
  async #loadSkills(
    slot: ServerSlot,
    client: Client,
    timeout: number,
  ): Promise<void> {
    try {
      const { skills, refused } = await loadServerSkills(client, timeout);
      slot.skills = scrubServer(skills, slot.secrets);
      slot.refusedSkills = scrubServer(refused, slot.secrets);
    } catch (error) {
      slot.skills = [];
      slot.refusedSkills = [{
        uri: "skills/list",
        reason: scrubServer((error as Error).message, slot.secrets),
      }];
    }
    for (const { uri, reason } of slot.refusedSkills) {
      this.#options.log?.(
        `MCP server "${slot.name}": skill "${uri}" refused: ${reason}`,
      );
    }
  }

  // Detected once, on the first stdio start, unless the host says.
  #confinement = (): Promise<ConfinementStatus> =>
    this.#options.confinement?.() ??
      (this.#detected ??= detectConfinement("auto"));

  #changed(): void {
    if (!this.#closed) this.#options.onChange?.();
  }
}

async function transportFor(
  spec: McpServerSpec,
  confinement: () => Promise<ConfinementStatus>,
  egress: Pick<EgressBroker, "checkTarget">,
): Promise<Transport> {
  if (spec.url !== undefined) {
    const url = new URL(spec.url);
    return new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { ...spec.headers } },
      // Operator headers go to this origin only: no redirect leaves it.
      fetch: checkedFetch(egress, { origin: url }),
    });
  }
  const status = await confinement();
  if (status.mode === "required" && !status.active) {
    throw new Error(
      `sandbox.confinement is "required" but ${status.reason}; the server was not started`,
    );
  }
  return new ProcessClientTransport(spec, status.layout);
}

async function listAll(client: Client, timeout: number): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, {
      timeout,
    });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor && tools.length < 10_000);
  return tools;
}

function stderrOf(transport: Transport | null): string {
  const tail = transport instanceof ProcessClientTransport
    ? transport.stderrError
    : "";
  return tail ? ` (stderr: ${tail})` : "";
}

function failure(message: string): SandboxOutcome {
  return { ok: false, code: "tool_error", message, retryable: true };
}

function outcomeOf(result: CallToolResult): SandboxOutcome {
  const texts: string[] = [];
  for (const c of result.content as CallToolResult["content"]) {
    if (c.type === "text") texts.push(c.text);
  }
  if (result.isError) {
    return {
      ok: false,
      code: "tool_error",
      message: texts.join("\n") || "The MCP tool failed",
      retryable: false,
    };
  }
  const value = result.structuredContent ??
    (texts.length === result.content.length && texts.length === 1
      ? texts[0]
      : result.content);
  return { ok: true, value, truncated: false };
}
