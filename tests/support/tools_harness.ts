/**
 * End-to-end harness for the tools and toolkits capabilities: a real host
 * with a real sandbox pool and a watching registry, listening on a free
 * port, plus a WebSocket client that records every message it receives.
 *
 * @module
 */

import { EgressBroker } from "../../runtime/egress/broker.ts";
import { join } from "node:path";
import { createHost, type Host } from "../../runtime/host.ts";
import {
  loadRegistry,
  type Registry,
} from "../../runtime/registry/registry.ts";
import { createToolkitsCapability } from "../../runtime/toolkits/capability.ts";
import { createToolkitConfigs } from "../../runtime/toolkits/configs.ts";
import { createToolsCapability } from "../../runtime/tools/capability.ts";
import { parseHostPolicy } from "../../runtime/tools/policy.ts";
import {
  createSandbox,
  type SandboxPool,
} from "../../runtime/sandbox/sandbox.ts";

/** A message as received. */
export type Msg = Record<string, unknown>;

/** Options of {@link startToolsHost}. */
export interface ToolsHostOptions {
  /** Skills folders (origin `file`). */
  dirs: string[];
  /** Builtin skills folders. @default [] */
  builtin?: string[];
  /** The `policy` section. @default {} */
  policy?: Record<string, unknown>;
  /** The `toolkits` section. @default {} */
  toolkits?: Record<string, unknown>;
  /** Auth tokens. @default [] */
  tokens?: string[];
  /** Discovery cache folder. @default null (off) */
  cacheDir?: string | null;
  /**
   * `egress.allow_private_hosts`: hosts a confined module's own `fetch` may
   * reach at a loopback or private address. @default []
   */
  allowPrivateHosts?: string[];
}

/** A running host. */
export interface ToolsHost extends AsyncDisposable {
  host: Host;
  registry: Registry;
  sandbox: SandboxPool;
  wsUrl: string;
  /** Every line the host logged. */
  logs: string[];
}

/**
 * Starts a host serving `tools` and `toolkits` from the given folders.
 *
 * @param options folders and config sections
 * @returns the host; dispose it with `await using`
 */
export async function startToolsHost(
  options: ToolsHostOptions,
): Promise<ToolsHost> {
  const policy = parseHostPolicy(options.policy ?? {});
  const sandbox = createSandbox({
    cacheDir: options.cacheDir ?? null,
    policy: policy.permissions,
    egress: new EgressBroker({ privateHosts: options.allowPrivateHosts ?? [] }),
  });
  const registry = await loadRegistry({
    sandbox,
    dirs: [
      ...(options.builtin ?? []).map((path) => ({
        path,
        origin: "builtin" as const,
      })),
      ...options.dirs,
    ],
    watch: true,
  });
  const logs: string[] = [];
  const host = createHost({
    capabilities: [],
    config: {
      tokens: options.tokens ?? [],
      policy: options.policy ?? {},
      toolkits: (options.toolkits ?? {}) as Record<
        string,
        Record<string, unknown>
      >,
    },
    log: (line) => logs.push(line),
  });
  const configs = createToolkitConfigs(options.toolkits ?? {});
  host.addCapability(createToolsCapability({
    registry,
    sandbox,
    configs,
    policy,
    broadcast: (message) => host.broadcast(message),
  }));
  host.addCapability(createToolkitsCapability({ registry, configs }));
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  return {
    host,
    registry,
    sandbox,
    logs,
    wsUrl: url.replace("http", "ws") + "/a2e",
    async [Symbol.asyncDispose]() {
      await host.close({ timeoutSeconds: 1 });
      await registry.close();
      await sandbox.close();
    },
  };
}

/** The answer to a request, with the events that came before it. */
export interface Answer {
  final: Msg;
  events: Msg[];
}

/** A WebSocket A2E client that keeps everything it received. */
export interface Client {
  /** Every message received, in order. */
  readonly received: Msg[];
  /** Sends a request and resolves with its final message (bounded wait). */
  request(type: string, fields?: Record<string, unknown>): Promise<Answer>;
  /** Resolves with the first push (no `req_id`) matching `ok`. */
  push(ok: (m: Msg) => boolean, ms?: number): Promise<Msg>;
  close(): Promise<void>;
}

let counter = 0;

/**
 * Connects and handshakes.
 *
 * @param url the host's WebSocket URL
 * @param token the auth token to present
 * @returns the client
 */
export async function connectClient(url: string, token = ""): Promise<Client> {
  const socket = new WebSocket(url);
  const received: Msg[] = [];
  const pending = new Map<
    string,
    { events: Msg[]; resolve: (a: Answer) => void }
  >();
  const pushWaiters = new Set<(m: Msg) => boolean>();
  const closed = new Promise<void>((resolve) => {
    socket.onclose = () => resolve();
  });
  socket.onmessage = (event) => {
    const msg = JSON.parse(String(event.data)) as Msg;
    received.push(msg);
    const reqId = typeof msg.req_id === "string" ? msg.req_id : "";
    const waiting = pending.get(reqId);
    if (waiting) {
      if (String(msg.type).endsWith("/event")) waiting.events.push(msg);
      else {
        pending.delete(reqId);
        waiting.resolve({ final: msg, events: waiting.events });
      }
      return;
    }
    if (reqId === "") {
      for (const waiter of pushWaiters) {
        if (waiter(msg)) pushWaiters.delete(waiter);
      }
    }
  };
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error(`Cannot connect to "${url}"`));
  });
  const client: Client = {
    received,
    request(type, fields = {}) {
      const id = `r${++counter}`.padEnd(32, "0");
      return new Promise<Answer>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`No answer to "${type}" within 20 s`));
        }, 20_000);
        pending.set(id, {
          events: [],
          resolve: (a) => {
            clearTimeout(timer);
            resolve(a);
          },
        });
        socket.send(JSON.stringify({
          type,
          id,
          version: "1.0",
          ts: Date.now() / 1000,
          ...fields,
        }));
      });
    },
    push(ok, ms = 5000) {
      return new Promise<Msg>((resolve, reject) => {
        const timer = setTimeout(() => {
          pushWaiters.delete(waiter);
          reject(new Error(`No matching push within ${ms} ms`));
        }, ms);
        const waiter = (m: Msg) => {
          if (!ok(m)) return false;
          clearTimeout(timer);
          resolve(m);
          return true;
        };
        pushWaiters.add(waiter);
      });
    },
    async close() {
      if (socket.readyState < WebSocket.CLOSING) socket.close();
      await closed;
    },
  };
  const hello = await client.request("handshake/req", {
    agent_id: "e2e",
    agent_caps: ["tools", "toolkits"],
    auth_token: token,
  });
  if (hello.final.ok !== true) {
    throw new Error(`Handshake refused: ${String(hello.final.reason)}`);
  }
  return client;
}

/**
 * Writes a tool module (a plain definition object, no imports).
 *
 * @param dir the folder
 * @param file the file name
 * @param source the definition's object literal source
 */
export async function writeModule(
  dir: string,
  file: string,
  source: string,
): Promise<void> {
  await Deno.writeTextFile(join(dir, file), `export default ${source};\n`);
}
