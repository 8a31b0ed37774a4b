/**
 * The whole host as it runs in production, for end-to-end tests and the
 * bench: the sandbox pool, the registry over skillbox's own `skills/` (and
 * extra folders), the tools, toolkits and skill capabilities, served over
 * a real WebSocket, with the LLM pointed at a mock provider server through
 * the official SDKs. Plus a raw WebSocket A2E client that timestamps every
 * message it receives.
 *
 * @module
 */

import { createHost, type Host } from "../../runtime/host.ts";
import {
  loadRegistry,
  type Registry,
} from "../../runtime/registry/registry.ts";
import { createToolsCapability } from "../../runtime/tools/capability.ts";
import { parseHostPolicy } from "../../runtime/tools/policy.ts";
import { createToolkitsCapability } from "../../runtime/toolkits/capability.ts";
import { createToolkitConfigs } from "../../runtime/toolkits/configs.ts";
import {
  createSkillsCapability,
  hostLlm,
  registryToolHost,
} from "../../runtime/skills/capability.ts";
import {
  registryCatalog,
  SYSTEM_SKILLS_DIR,
} from "../../runtime/skills/catalog.ts";
import type { SkillLimits } from "../../runtime/skills/relays.ts";
import {
  createSandbox,
  type SandboxPool,
} from "../../runtime/sandbox/sandbox.ts";
import type { LlmConfig } from "../../runtime/llm/config.ts";

/** Options of {@link startStack}. */
export interface StackOptions {
  /** The mock provider. */
  llm: { provider: "openai" | "anthropic"; url: string };
  /** The filesystem toolkit's root (readable by the sandbox). */
  dataDir: string;
  /** More skills folders (origin `file`). @default [] */
  skillDirs?: string[];
  limits?: SkillLimits;
}

/** A running stack. */
export interface Stack {
  host: Host;
  registry: Registry;
  sandbox: SandboxPool;
  /** `ws://…/a2e` */
  wsUrl: string;
  close(): Promise<void>;
}

/** Starts the full host on a free port. */
export async function startStack(options: StackOptions): Promise<Stack> {
  const policy = parseHostPolicy({
    permissions: { read: [options.dataDir] },
  });
  const sandbox = createSandbox({ cacheDir: null, policy: policy.permissions });
  const registry = await loadRegistry({
    sandbox,
    dirs: [
      { path: SYSTEM_SKILLS_DIR, origin: "builtin" },
      ...(options.skillDirs ?? []),
    ],
  });
  const configs = createToolkitConfigs({
    filesystem: { root: options.dataDir },
  });
  const tools = createToolsCapability({ registry, sandbox, configs, policy });
  const llm: LlmConfig[] = [{
    provider_name: options.llm.provider,
    provider_credentials: { api_key: "test-key" },
    provider_config: { base_url: options.llm.url, model: "mock-model" },
    is_default: true,
  }];
  const skills = createSkillsCapability({
    catalog: registryCatalog({ registry, policy: policy.permissions }),
    tools: registryToolHost({ registry, caller: tools.caller }),
    sandbox,
    llm: hostLlm(llm),
    limits: options.limits,
  });
  const host = createHost({
    capabilities: [
      tools,
      createToolkitsCapability({ registry, configs }),
      skills,
    ],
  });
  const address = await host.listen({ hostname: "127.0.0.1", port: 0 });
  return {
    host,
    registry,
    sandbox,
    wsUrl: `ws://127.0.0.1:${address.port}/a2e`,
    async close() {
      await host.close({ timeoutSeconds: 1 });
      await registry.close();
      await sandbox.close();
    },
  };
}

/** A message received, with when (epoch ms, sub-ms). */
export interface Received {
  at: number;
  message: Record<string, unknown>;
}

/** A raw A2E WebSocket client. */
export interface A2eSocket {
  /** Sends a request and resolves with its final answer; `onEvent` sees events as they arrive. */
  request(
    message: Record<string, unknown>,
    onEvent?: (r: Received) => void,
  ): Promise<Received>;
  /** Every message received, in order. */
  received: Received[];
  close(): Promise<void>;
}

/** Connects and handshakes. */
export async function connectA2e(url: string): Promise<A2eSocket> {
  const ws = new WebSocket(url);
  const received: Received[] = [];
  const waiting = new Map<
    string,
    { resolve: (r: Received) => void; onEvent?: (r: Received) => void }
  >();
  const closed = Promise.withResolvers<void>();
  ws.onclose = () => closed.resolve();
  ws.onmessage = (e) => {
    const r = {
      at: performance.timeOrigin + performance.now(),
      message: JSON.parse(String(e.data)),
    };
    received.push(r);
    const w = waiting.get(String(r.message.req_id));
    if (!w) return;
    if (String(r.message.type).endsWith("/event")) w.onEvent?.(r);
    else {
      waiting.delete(String(r.message.req_id));
      w.resolve(r);
    }
  };
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`Cannot connect to "${url}"`));
  });
  const request = (
    message: Record<string, unknown>,
    onEvent?: (r: Received) => void,
  ) => {
    const id = crypto.randomUUID().replaceAll("-", "");
    const done = Promise.withResolvers<Received>();
    waiting.set(id, { resolve: done.resolve, onEvent });
    ws.send(
      JSON.stringify({ id, version: "1.0", ts: Date.now() / 1000, ...message }),
    );
    return done.promise;
  };
  const hello = await request({
    type: "handshake/req",
    agent_caps: ["tools", "toolkits", "skill"],
  });
  if (hello.message.ok !== true) throw new Error("Handshake refused");
  return {
    request,
    received,
    async close() {
      if (ws.readyState !== WebSocket.CLOSED) ws.close();
      await closed.promise;
    },
  };
}
