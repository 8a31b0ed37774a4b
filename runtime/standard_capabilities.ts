/**
 * The standard capabilities a host serves when the embedder names none: the
 * sandbox pool, the registry over the skills folders (watched), and the
 * `tools`, `toolkits` and `skill` capabilities, all built from one
 * {@link HostConfig}.
 *
 * Loading the registry reads every module through the sandbox, which takes
 * time; the capabilities are offered at once and their handlers wait for the
 * load, so a host can listen (and answer handshakes and pings) immediately.
 *
 * @module
 */

import { brokerFromConfig } from "./egress/broker.ts";
import { createSandbox } from "./sandbox/sandbox.ts";
import type { SandboxProcessInfo } from "./sandbox/types.ts";
import type { RunObserver } from "./store/recorder.ts";
import type { Capability, Handler, OutgoingMessage } from "./capability.ts";
import type { HostConfig } from "./config_schema.ts";
import { SkillboxError } from "../protocol/errors.ts";
import type { CapabilityName } from "../protocol/codes.ts";
import type { AnsweredRequestType } from "../protocol/responses.ts";
import {
  loadRegistry,
  progressLogger,
  type Registry,
} from "./registry/registry.ts";
import {
  createSkillsCapability,
  hostLlm,
  registryToolHost,
  type SkillsCapabilityOptions,
} from "./skills/capability.ts";
import { registryCatalog } from "./skills/catalog.ts";
import { hostFiles, sandboxPolicy, skillDirs } from "./host_paths.ts";
import { GrantCache } from "./sandbox/grants.ts";
import type { RegistrySnapshot } from "./registry/types.ts";
import {
  type LoadReport,
  loadReport,
  logNewRefusals,
  type RegistryStatus,
  registryStatus,
} from "./load_report.ts";
import { parseInterpreters } from "./skills/scripts/interpreters.ts";
import { DEFAULT_WORKSPACE_QUOTA } from "./skills/scripts/workspace_mount.ts";
import { createToolsCapability } from "./tools/capability.ts";
import {
  CODE_TOOL,
  CodeCalls,
  type InnerAdmission,
  type InnerSkillRunner,
} from "./code/inner_calls.ts";
import { innerSkillRunner } from "./code/inner_skills.ts";
import { type HostPolicy, parseHostPolicy } from "./tools/policy.ts";
import { createToolkitsCapability } from "./toolkits/capability.ts";
import { createToolkitConfigs } from "./toolkits/configs.ts";
import {
  createImportedServers,
  type ImportedServers,
} from "./mcp/imported_servers.ts";
import { importedSkillFiles } from "./mcp/imported_skills.ts";
import type { RemoteSkill } from "./mcp/skills_extension.ts";
import {
  CODE_API_TOOL,
  createCodeApi,
  publishedSkills,
} from "./code/code_api.ts";
import type { HostedTool } from "./tools/call.ts";

/**
 * The imported MCP servers as the host shows them.
 *
 * @example Wait for a server's first start
 * ```ts
 * import { parseConfig } from "./config.ts";
 * import { createHost } from "./host.ts";
 * import assert from "node:assert/strict";
 * const config = parseConfig(JSON.stringify({
 *   skills: [],
 *   builtin_skills: false,
 *   store: null,
 *   mcp_servers: { ghost: { command: "/nonexistent" } },
 * }));
 * const host = createHost({ config });
 * assert.deepEqual(host.mcpServers.starting(), ["ghost"]);
 * await host.mcpServers.ready;
 * // Its first start failed (it is retried in the background).
 * assert.deepEqual(host.mcpServers.starting(), []);
 * await host.close();
 * ```
 */
export interface McpServersView {
  /**
   * Resolves once every server has come up or failed its first start, and
   * the registry lists what came up (the host serves before; a failed
   * server keeps retrying); rejects when the skills folders fail to load.
   */
  ready: Promise<void>;
  /** The servers whose first start has not ended yet. */
  starting(): string[];
}

/** Options of {@link createStandardCapabilities}. */
export interface StandardCapabilitiesOptions {
  /** Sends a push message to every session (the host's `broadcast`). */
  broadcast: (message: OutgoingMessage) => void;
  /** Receives diagnostic lines. @default ignore them */
  log?: (line: string) => void;
  /** The config file, kept out of every sandbox's reach. */
  configPath?: string;
  /** Receives every tool call and skill run (history, metrics). */
  observer?: RunObserver;
  /**
   * Rate quota and call slots of `run_code`'s inner calls (the
   * dispatcher's `admitInner`). @default none: inner calls take no slot
   */
  admitInner?: InnerAdmission;
}

/** The standard capabilities, and how to wait for and release them. */
export interface StandardCapabilities {
  /** `tools`, `toolkits` and `skill`, usable at once. */
  capabilities: Capability[];
  /** Resolves once the skills folders are loaded; rejects if they cannot be. */
  ready: Promise<LoadReport>;
  /** The registry's current snapshot; null until the first load. */
  readonly snapshot: RegistrySnapshot | null;
  /** The imported servers' verified skills, served again over MCP. */
  remoteSkills(): RemoteSkill[];
  /** The imported MCP servers, started in the background. */
  mcpServers: McpServersView;
  /** Stops watching and kills every sandbox process. */
  close(): Promise<void>;
  /** The live sandbox processes. */
  processes(): SandboxProcessInfo[];
  /** A session closed: retires its session-keyed sandbox processes. */
  endSession(sessionId: string): void;
  /**
   * The operator's view: every tool's status under the host policy and
   * what the registry and skill catalog refused; null until loaded.
   */
  registryStatus(): RegistryStatus | null;
}

const REQUEST_TYPES: Record<
  "tools" | "toolkits" | "skill",
  AnsweredRequestType[]
> = {
  tools: ["tool/list/req", "tool/call/req"],
  toolkits: ["toolkit/list/req", "toolkit/configure/req"],
  skill: ["skill/discover/req", "skill/call/req"],
};

/**
 * Builds the standard capabilities from a config.
 *
 * @param config the host configuration
 * @param options push, logging and the config file's path
 * @returns the capabilities (usable at once) and the load promise
 * @throws {TypeError} when the config's policy or toolkits section is malformed
 * @example Serve an empty skills folder
 * ```ts
 * import { createStandardCapabilities } from "./standard_capabilities.ts";
 * import { defaultConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const config = { ...defaultConfig(), skills: [dir], builtinSkills: false };
 * config.sandbox.cacheDir = null;
 * const stack = createStandardCapabilities(config, { broadcast() {} });
 * assert.deepEqual(stack.capabilities.map((c) => c.name), ["tools", "toolkits", "skill"]);
 * assert.equal((await stack.ready).tools, 0);
 * await stack.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function createStandardCapabilities(
  config: HostConfig,
  options: StandardCapabilitiesOptions,
): StandardCapabilities {
  const log = options.log ?? (() => {});
  const dirs = skillDirs(config);
  const operator = parseHostPolicy(config.policy);
  // The host's own files: never seen by a sandbox or an imported server.
  const protect = hostFiles(config, options.configPath);
  const permissions = sandboxPolicy(operator.permissions, {
    served: dirs.map((d) => d.path),
    hostFiles: protect,
  });
  // The operator's policy, with the sandbox policy as its permissions.
  const policy: HostPolicy = { ...operator, permissions };
  const configs = createToolkitConfigs(config.toolkits);
  const egress = brokerFromConfig(config.egress);
  // The config's sandbox section names the pool's options (the script
  // workspace fields are the skill capability's, and ignored here).
  const sandbox = createSandbox({
    ...config.sandbox,
    policy: permissions,
    egress,
  });
  let registry: Registry | null = null;
  let statusOf: (() => RegistryStatus) | null = null;
  let closed = false;
  // A server that comes up before the first load ends is read again then.
  let missed = false;
  const imported = importedServers(async () => {
    if (registry) await registry.reload();
    else missed = true;
  });
  const built = (async () => {
    // Said once, in the banner; "required" without it fails the start here.
    log((await sandbox.confinement()).reason);
    // Not awaited: the host serves at once, and each server's tools join
    // the registry when it is ready (its change reloads the registry).
    imported?.start().catch(() => {});
    const loaded = await loadRegistry({
      sandbox,
      dirs,
      watch: true,
      onProgress: progressLogger(log),
      extraModules: imported ? () => imported.modules() : undefined,
    });
    if (closed) {
      await loaded.close();
      throw new SkillboxError("runtime_error", "The host is closing");
    }
    registry = loaded;
    if (missed) loaded.reload().catch(() => {});
    const catalog = registryCatalog({
      registry: loaded,
      policy: permissions,
      importedFiles: () => importedSkillFiles(imported?.remoteSkills() ?? []),
    });
    statusOf = () =>
      registryStatus(loaded.snapshot, { catalog, rules: policy });
    const capabilities = buildCapabilities(loaded, catalog);
    const report = await loadReport(loaded, { catalog, dirs, log });
    logNewRefusals(loaded, log);
    return { capabilities, report };
  })();
  // Failures surface through `ready` and each handler; never unhandled.
  built.catch(() => {});

  const capabilities = (["tools", "toolkits", "skill"] as const).map((name) =>
    deferredCapability(
      name,
      REQUEST_TYPES[name],
      built.then((b) => b.capabilities[name]),
    )
  );
  return {
    capabilities,
    ready: built.then((b) => b.report),
    get snapshot() {
      return registry?.snapshot ?? null;
    },
    remoteSkills: () => imported?.remoteSkills() ?? [],
    mcpServers: {
      ready: built.then(async () => {
        if (!imported) return;
        await imported.start();
        await registry?.reload();
      }),
      starting: () => imported?.starting() ?? [],
    },
    processes: () => sandbox.processes(),
    endSession: (sessionId) => sandbox.endSession(sessionId),
    registryStatus: () => statusOf?.() ?? null,
    async close() {
      closed = true;
      await built.catch(() => {});
      await registry?.close();
      await imported?.close();
      await sandbox.close();
    },
  };

  // The parts above are in scope of the two below: they read them, never
  // passed along.

  /** The config's MCP servers, imported as toolkits; null when none. */
  function importedServers(
    onChange: () => Promise<void>,
  ): ImportedServers | null {
    // A stdio server's hosts go through the same broker's rules.
    const servers = Object.fromEntries(
      Object.entries(config.mcpServers ?? {}).map((
        [name, spec],
      ) => [
        name,
        spec.url === undefined ? { ...spec, egress, protect } : spec,
      ]),
    );
    if (Object.keys(servers).length === 0) return null;
    return createImportedServers({
      servers,
      log,
      confinement: () => sandbox.confinement(),
      // HTTP servers are reached under the egress address rules.
      egress,
      // A call's request outlives the longest call, and is still bounded.
      requestTimeoutMs: Math.max(600_000, policy.maxTimeoutMs + 10_000),
      onChange,
      backoff: config.mcp && {
        initialMs: config.mcp.retryInitialMs,
        maxMs: config.mcp.retryMaxMs,
      },
      maxResultBytes: config.sandbox.maxResultBytes,
    });
  }

  /** The `tools`, `toolkits` and `skill` capabilities over a loaded registry. */
  function buildCapabilities(
    loaded: Registry,
    catalog: ReturnType<typeof registryCatalog>,
  ): Record<"tools" | "toolkits" | "skill", Capability> {
    // run_code's skills are run with what the skill capability gets, made
    // below: bound once it exists.
    let skills: InnerSkillRunner | null = null;
    const code = new CodeCalls({
      maxCalls: config.code?.maxCalls,
      maxResultBytes: config.sandbox.maxResultBytes,
      admit: options.admitInner,
      skills: (request) => skills!(request),
    });
    const codeApi = createCodeApi({
      registry: loaded,
      policy,
      configs,
      skills: publishedSkills(catalog, {
        registry: loaded,
        archived: config.archivedSkills,
      }),
    });
    const tools = createToolsCapability({
      registry: loaded,
      sandbox,
      // Code mode's shipped tools: run_code runs in the sandbox with its
      // inner calls, code_api is answered in the host, after the checks of
      // every call.
      hosted: new Map<string, HostedTool>([
        [CODE_TOOL, code],
        [CODE_API_TOOL, codeApi],
      ]),
      // Imported MCP servers' tools are called on their servers, after the
      // same checks; no other call passes through the servers.
      imported: imported ?? undefined,
      configs,
      policy,
      broadcast: options.broadcast,
      egress,
      observer: options.observer,
    });
    const skillOptions: SkillsCapabilityOptions = {
      catalog,
      tools: registryToolHost({
        registry: loaded,
        caller: tools.caller,
        // A skill script's filesystem mount: the session's configuration,
        // checked against the policy as the toolkit's own calls are.
        toolkits: {
          configs,
          grants: new GrantCache(sandbox, policy.permissions),
        },
      }),
      sandbox,
      llm: hostLlm(config.llm, { rules: config.llmRules, broker: egress }),
      archived: config.archivedSkills,
      limits: {
        maxTimeoutSeconds: policy.maxTimeoutMs / 1000,
        maxTurns: config.limits.maxTurns,
        defaultMaxTurns: config.limits.defaultMaxTurns,
        interpreters: parseInterpreters(config.policy),
        scriptConfinement: config.sandbox.confinement,
        // The fields are optional for configs built in code (tests, embedders).
        scriptWorkspace: {
          bytes: config.sandbox.scriptWorkspaceMb === undefined
            ? DEFAULT_WORKSPACE_QUOTA.bytes
            : config.sandbox.scriptWorkspaceMb * 1024 * 1024,
          files: config.sandbox.scriptWorkspaceFiles ??
            DEFAULT_WORKSPACE_QUOTA.files,
        },
        scriptFiles: config.store?.files,
        scriptEnvGrant: policy.permissions.env,
        scriptNetGrant: policy.permissions.net,
        scriptEgress: egress,
      },
      observer: options.observer,
    };
    const skill = createSkillsCapability(skillOptions);
    skills = innerSkillRunner(skillOptions);
    const toolkits = createToolkitsCapability({
      registry: loaded,
      configs,
      tools: policy.tools,
    });
    return { tools, toolkits, skill };
  }
}

// Offers a capability at once; its handlers wait for the real one. Once it
// is there, its handlers take the waiting ones' places in the table (the
// dispatcher reads the table on each request): a call goes straight to the
// real handler, through nothing of this file. When it cannot be built the
// waiting handlers stay, and say why.
function deferredCapability(
  name: CapabilityName,
  types: AnsweredRequestType[],
  real: Promise<Capability>,
): Capability {
  let failure: unknown = null;
  const handlers: Partial<Record<AnsweredRequestType, Handler>> = {};
  real.then((capability) => {
    for (const type of types) {
      const handler = capability.handlers[type] as Handler | undefined;
      if (handler) handlers[type] = handler;
    }
  }, (error) => (failure = error));
  for (const type of types) {
    // Reached only by calls that came before the real one was there.
    handlers[type] = async (exchange) => {
      const capability = await real.catch(() => null);
      const handler = capability?.handlers[type] as Handler | undefined;
      if (!handler) {
        const why = failure instanceof Error
          ? failure.message
          : String(failure);
        throw new SkillboxError(
          "runtime_error",
          `Cannot handle "${type}": the skills folders failed to load: ${why}`,
          { retryable: true },
        );
      }
      return handler(exchange);
    };
  }
  return {
    name,
    handlers: handlers as Capability["handlers"],
    close: async () => {
      const capability = await real.catch(() => null);
      await capability?.close?.();
    },
  };
}
