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

import { existsSync, realpathSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { brokerFromConfig } from "./egress/from_config.ts";
import { createSandbox, type SandboxProcessInfo } from "./sandbox/pool.ts";
import type { RunObserver } from "./store/observer.ts";
import type { Policy } from "./sandbox/permissions.ts";
import type { Capability, Handler, OutgoingMessage } from "./capability.ts";
import type { HostConfig } from "./config.ts";
import { SkillboxError } from "../protocol/errors.ts";
import type { CapabilityName } from "../protocol/codes.ts";
import type { AnsweredRequestType } from "../protocol/responses.ts";
import { loadRegistry, type Registry } from "./registry/registry.ts";
import type { SkillDir } from "./registry/scan.ts";
import { progressLogger } from "./registry/progress.ts";
import { createSkillsCapability } from "./skills/capability.ts";
import { registryCatalog, SYSTEM_SKILLS_DIR } from "./skills/catalog.ts";
import { hostLlm } from "./skills/host_llm.ts";
import { registryToolHost } from "./skills/tool_host.ts";
import { GrantCache } from "./sandbox/grants.ts";
import type { RegistrySnapshot } from "./registry/types.ts";
import { skillLoadWarnings } from "./skills/load_warnings.ts";
import { parseInterpreters } from "./skills/scripts/interpreters.ts";
import { createToolsCapability } from "./tools/capability.ts";
import { parseHostPolicy } from "./tools/policy.ts";
import { createToolkitsCapability } from "./toolkits/capability.ts";
import { createToolkitConfigs } from "./toolkits/configs.ts";
import { createImportedServers } from "./mcp/imported.ts";
import { routeImported } from "./mcp/import_sandbox.ts";

/** What the first load of the skills folders found. */
export interface LoadReport {
  /** Tools served. */
  tools: number;
  /** Toolkits served. */
  toolkits: number;
  /** Skills discovered (code skills and `SKILL.md` folders), any status. */
  skills: number;
  /** The skills folders read, absolute. */
  dirs: string[];
  /** Files that could not be loaded, and why. */
  errors: { path: string; message: string }[];
  /** Skill dialect warnings and unloadable skills, one line each. */
  warnings: string[];
}

/** Options of {@link createStandardStack}. */
export interface StandardStackOptions {
  /** Sends a push message to every session (the host's `broadcast`). */
  broadcast: (message: OutgoingMessage) => void;
  /** Receives diagnostic lines. @default ignore them */
  log?: (line: string) => void;
  /** The config file, kept out of every sandbox's reach. */
  configPath?: string;
  /** Receives every tool call and skill run (history, metrics). */
  observer?: RunObserver;
}

/** The standard capabilities, and how to wait for and release them. */
export interface StandardStack {
  /** `tools`, `toolkits` and `skill`, usable at once. */
  capabilities: Capability[];
  /** Resolves once the skills folders are loaded; rejects if they cannot be. */
  ready: Promise<LoadReport>;
  /** The registry's current snapshot; null until the first load. */
  readonly snapshot: RegistrySnapshot | null;
  /** Stops watching and kills every sandbox process. */
  close(): Promise<void>;
  /** The live sandbox processes. */
  processes(): SandboxProcessInfo[];
  /** A session closed: retires its session-keyed sandbox processes. */
  endSession(sessionId: string): void;
}

const REQUEST_TYPES: Record<
  "tools" | "toolkits" | "skill",
  AnsweredRequestType[]
> = {
  tools: ["tool/list/req", "tool/call/req"],
  toolkits: ["toolkit/list/req", "toolkit/configure/req"],
  skill: ["skill/discover/req", "skill/call/req"],
};

// The project root: host source and config live here and must never be
// readable from a sandbox, but its `skills/` folder is served. Null when
// skillbox runs from a remote URL (JSR): its source is then in Deno's cache,
// not on a path a grant could name.
const PROJECT_ROOT = import.meta.url.startsWith("file:")
  ? dirname(dirname(fileURLToPath(import.meta.url)))
  : null;

/**
 * Builds the standard capabilities from a config.
 *
 * @param config the host configuration
 * @param options push, logging and the config file's path
 * @returns the capabilities (usable at once) and the load promise
 * @throws {TypeError} when the config's policy or toolkits section is malformed
 * @example Serve an empty skills folder
 * ```ts
 * import { createStandardStack } from "./stack.ts";
 * import { defaultConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const config = { ...defaultConfig(), skills: [dir], builtinSkills: false };
 * config.sandbox.cacheDir = null;
 * const stack = createStandardStack(config, { broadcast() {} });
 * assert.deepEqual(stack.capabilities.map((c) => c.name), ["tools", "toolkits", "skill"]);
 * assert.equal((await stack.ready).tools, 0);
 * await stack.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function createStandardStack(
  config: HostConfig,
  options: StandardStackOptions,
): StandardStack {
  const log = options.log ?? (() => {});
  const dirs = skillDirs(config);
  const policy = parseHostPolicy(config.policy);
  const permissions = sandboxPolicy(policy.permissions, {
    served: dirs.map((d) => d.path),
    hostFiles: hostFiles(config, options.configPath),
  });
  const configs = createToolkitConfigs(config.toolkits);
  const egress = brokerFromConfig(config.egress);
  const sandbox = createSandbox({
    policy: permissions,
    memoryMb: config.sandbox.memoryMb,
    maxIdleProcesses: config.sandbox.maxIdleProcesses,
    spareWorkers: config.sandbox.spareWorkers,
    spareProcesses: config.sandbox.spareProcesses,
    workerBudgetMb: config.sandbox.workerBudgetMb,
    maxProcesses: config.sandbox.maxProcesses,
    processesPerPrincipal: config.sandbox.processesPerPrincipal,
    processWaitMs: config.sandbox.processWaitMs,
    maxResultBytes: config.sandbox.maxResultBytes,
    cacheDir: config.sandbox.cacheDir,
    confinement: config.sandbox.confinement ?? "auto",
    egress,
  });
  const hostPolicy = { ...policy, permissions };

  let registry: Registry | null = null;
  let closed = false;
  // A stdio server's hosts go through the same broker's rules.
  const servers = Object.fromEntries(
    Object.entries(config.mcpServers ?? {}).map((
      [name, spec],
    ) => [name, spec.url === undefined ? { ...spec, egress } : spec]),
  );
  const imported = Object.keys(servers).length === 0
    ? null
    : createImportedServers({
      servers,
      log,
      confinement: () => sandbox.confinement(),
      // HTTP servers are reached under the egress address rules.
      egress,
      onChange: () => {
        (registry as Registry | null)?.reload().catch(() => {});
      },
    });
  const built = (async () => {
    // Said once, in the banner; "required" without it fails the start here.
    log((await sandbox.confinement()).reason);
    await imported?.start();
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
    const tools = createToolsCapability({
      registry: loaded,
      sandbox: imported ? routeImported(sandbox, imported) : sandbox,
      configs,
      policy: hostPolicy,
      broadcast: options.broadcast,
      egress,
      observer: options.observer,
    });
    const catalog = registryCatalog({ registry: loaded, policy: permissions });
    const capabilities = {
      tools,
      toolkits: createToolkitsCapability({ registry: loaded, configs }),
      skill: createSkillsCapability({
        catalog,
        tools: registryToolHost({
          registry: loaded,
          caller: tools.caller,
          // A skill script's filesystem mount: the session's configuration,
          // checked against the policy as the toolkit's own calls are.
          toolkits: { configs, grants: new GrantCache(sandbox, permissions) },
        }),
        sandbox,
        llm: hostLlm(config.llm),
        archived: config.archivedSkills,
        limits: {
          maxTimeoutSeconds: policy.maxTimeoutMs / 1000,
          maxTurns: config.limits.maxTurns,
          defaultMaxTurns: config.limits.defaultMaxTurns,
          interpreters: parseInterpreters(config.policy),
          scriptConfinement: config.sandbox.confinement,
          scriptEnvGrant: policy.permissions.env,
          scriptNetGrant: policy.permissions.net,
          scriptEgress: egress,
        },
        observer: options.observer,
      }),
    };
    const snapshot = loaded.snapshot;
    for (const error of snapshot.errors) {
      log(`Cannot load "${error.path}": ${error.message}`);
    }
    const skills = await catalog.skills();
    const report: LoadReport = {
      tools: snapshot.tools.size,
      toolkits: snapshot.toolkits.size,
      skills: skills.length,
      warnings: skillLoadWarnings(skills),
      dirs: dirs.map((d) => d.path),
      errors: snapshot.errors.map((e) => ({
        path: e.path,
        message: e.message,
      })),
    };
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
      return (registry as Registry | null)?.snapshot ?? null;
    },
    processes: () => sandbox.processes(),
    endSession: (sessionId) => sandbox.endSession(sessionId),
    async close() {
      closed = true;
      await built.catch(() => {});
      await (registry as Registry | null)?.close();
      await imported?.close();
      await sandbox.close();
    },
  };
}

// Offers a capability at once; its handlers wait for the real one. Once it
// is there, calls go straight through (no extra await on the hot path).
function deferredCapability(
  name: CapabilityName,
  types: AnsweredRequestType[],
  real: Promise<Capability>,
): Capability {
  let ready: Capability | null = null;
  let failure: unknown = null;
  real.then((c) => (ready = c), (error) => (failure = error));
  const handlers: Partial<Record<AnsweredRequestType, Handler>> = {};
  for (const type of types) {
    handlers[type] = async (exchange) => {
      const capability = ready ?? await real.catch(() => null);
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

function skillDirs(config: HostConfig): SkillDir[] {
  const dirs: SkillDir[] = [];
  const seen = new Set<string>();
  const add = (path: string, origin: SkillDir["origin"]) => {
    const absolute = resolve(path);
    const key = existsSync(absolute) ? realpathSync(absolute) : absolute;
    if (seen.has(key)) return;
    seen.add(key);
    dirs.push({ path: absolute, origin });
  };
  if (config.builtinSkills && SYSTEM_SKILLS_DIR !== "") {
    add(SYSTEM_SKILLS_DIR, "builtin");
  }
  for (const dir of config.skills) add(dir, "file");
  return dirs;
}

/**
 * The policy sandboxes run under: the operator's, plus the host's own files
 * denied. The project root is denied as a whole except the served skills
 * folders inside it (an allow-list of what sandboxes need, so a folder
 * added to the project later is denied too), plus the config and cache.
 *
 * @param base the operator's policy
 * @param options the served skills folders and host files outside the root
 * @returns the policy
 * @example A new folder in the project root is not grantable
 * ```ts
 * import { sandboxPolicy } from "./stack.ts";
 * import assert from "node:assert/strict";
 * const policy = sandboxPolicy({}, { served: [], hostFiles: [] });
 * assert.equal(policy.deniedTrees?.length, 1);
 * ```
 */
export function sandboxPolicy(
  base: Policy,
  options: { served: string[]; hostFiles: string[] },
): Policy {
  return {
    ...base,
    deny: [...(base.deny ?? []), ...options.hostFiles],
    deniedTrees: [
      ...(base.deniedTrees ?? []),
      ...(PROJECT_ROOT === null
        ? []
        : [{ root: PROJECT_ROOT, except: options.served }]),
    ],
    // A module directly in a skills folder gets its own file, not its
    // neighbours'.
    sharedFolders: [...(base.sharedFolders ?? []), ...options.served],
  };
}

// Host files outside the project tree: the config and the discovery cache.
function hostFiles(config: HostConfig, configPath?: string): string[] {
  const paths: string[] = [];
  if (configPath) paths.push(resolve(configPath));
  if (existsSync("skillbox.jsonc")) paths.push(resolve("skillbox.jsonc"));
  if (config.sandbox.cacheDir) paths.push(resolve(config.sandbox.cacheDir));
  // The run history holds every principal's arguments and results.
  if (config.store && config.store.path !== ":memory:") {
    const db = resolve(config.store.path);
    paths.push(db, `${db}-wal`, `${db}-shm`, `${db}-journal`);
  }
  return paths;
}
