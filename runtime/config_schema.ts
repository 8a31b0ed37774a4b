/**
 * The schema of `skillbox.jsonc`, in one place: the typed {@link HostConfig}
 * the host runs on, the zod schema of the file (snake_case, every default),
 * and the one function that checks a parsed file and maps it onto the other.
 * A new config section is added here: its interface field, its zod entry and
 * its line in {@link validateConfig}.
 *
 * @module
 */

import { z } from "zod";
import {
  checkLlmConfig,
  LLM_SECTION,
  type LlmConfig,
  type LlmRules,
  readLlmSection,
} from "./llm/config.ts";
import type { McpServerSpec } from "./mcp/imported_servers.ts";
import { describeZodError } from "../protocol/request_schemas.ts";
import type { JsonObject } from "../protocol/json.ts";
import { fromWire } from "../protocol/wire_names.ts";
import { ConfigError } from "./config_error.ts";
import { parseHostPolicy } from "./tools/policy.ts";
import {
  type StoreConfig,
  StoreConfigSchema,
  toStoreConfig,
} from "./store/config.ts";
import { parseTokenQuotas } from "./quotas.ts";
import { parseInterpreters } from "./skills/scripts/interpreters.ts";
import { DEFAULT_WORKSPACE_QUOTA } from "./skills/scripts/workspace_mount.ts";

/**
 * The listen address.
 *
 * @example Let a LAN name through the host's door
 * ```ts
 * import { parseConfig } from "./config.ts";
 * import { createHost } from "./host.ts";
 * import assert from "node:assert/strict";
 * const config = parseConfig('{ "listen": { "allowed_hosts": ["skillbox.lan"] } }');
 * assert.deepEqual(config.listen.allowedHosts, ["skillbox.lan"]);
 * assert.equal(config.listen.port, 8787);
 * const host = createHost({ config, capabilities: [] });
 * const status = async (name: string) =>
 *   (await host.fetch(new Request(`http://${name}/health`))).status;
 * assert.equal(await status("skillbox.lan"), 200);
 * assert.equal(await status("evil.test"), 403);
 * await host.close();
 * ```
 */
export interface ListenConfig {
  /** The interface to listen on. @default "127.0.0.1" */
  hostname: string;
  /** 0 picks a free port. @default 8787 */
  port: number;
  /**
   * More names the `Host` header may carry (a reverse proxy's or LAN name),
   * as `name` (any port) or `name:port`. @default []
   */
  allowedHosts: string[];
  /** More browser origins let in, as `scheme://host[:port]`. @default [] */
  allowedOrigins: string[];
}

/**
 * The limits the host enforces.
 *
 * @example Raise one limit; the rest keep their defaults
 * ```ts
 * import { parseConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const { limits } = parseConfig('{ "limits": { "max_parallel": 2 } }');
 * assert.equal(limits.maxParallel, 2);
 * assert.equal(limits.maxParallelHost, 64);
 * assert.throws(
 *   () => parseConfig('{ "limits": { "max_message_bytes": 100 } }'),
 *   /limits\.max_message_bytes/,
 * );
 * ```
 */
export interface LimitsConfig {
  /** Largest message accepted, in UTF-8 bytes. @default 4194304 */
  maxMessageBytes: number;
  /** Admitted sessions at once; more are refused. @default 1024 */
  maxSessions: number;
  /** Sessions waiting for a handshake with a token (only when tokens are set); the oldest is closed beyond. @default 128 */
  maxPendingSessions: number;
  /** A session not admitted by a handshake with a token within this long is closed. @default 10 */
  handshakeTimeoutSeconds: number;
  /** Capability requests one session runs at once (queued beyond). @default 4 */
  maxParallel: number;
  /** Capability requests running at once across sessions. @default 64 */
  maxParallelHost: number;
  /** MCP skill, resource and prompt requests one token (all clients without a token together) has in flight, until its answer is sent; more are refused. @default 4 */
  mcpReadsPerToken: number;
  /** An HTTP+SSE transport session with no stream and no request for this long expires. @default 300 */
  sseIdleSeconds: number;
  /** How long `close()` waits for in-flight calls. @default 10 */
  shutdownTimeoutSeconds: number;
  /** How long a request body may take to arrive (408 past it). @default 60 */
  requestBodySeconds: number;
  /** The most LLM turns any skill may take (caps `max_turns`). @default 50 */
  maxTurns: number;
  /** `max_turns` of a skill that sets none. @default 10 */
  defaultMaxTurns: number;
}

/**
 * How sandbox processes are run.
 *
 * @example Smaller processes, and confinement or no start
 * ```ts
 * import { parseConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const { sandbox } = parseConfig(
 *   '{ "sandbox": { "memory_mb": 256, "confinement": "required" } }',
 * );
 * assert.equal(sandbox.memoryMb, 256);
 * assert.equal(sandbox.confinement, "required");
 * assert.equal(sandbox.processesPerPrincipal, undefined); // the CPU count
 * assert.throws(
 *   () => parseConfig('{ "sandbox": { "confinement": "on" } }'),
 *   /sandbox\.confinement/,
 * );
 * ```
 */
export interface SandboxConfig {
  /** Heap cap per sandbox process, in MiB. @default 512 */
  memoryMb: number;
  /** Idle sandbox processes kept warm (least recently used retired). @default 8 */
  maxIdleProcesses: number;
  /** Spare workers kept started in each process (more under bursts). @default 1 */
  spareWorkers: number;
  /** Never-used sandbox processes kept ahead of new sessions' code. @default 1 */
  spareProcesses?: number;
  /** Memory for warm and spare workers per process, in MiB. @default 1024 */
  workerBudgetMb?: number;
  /** Live sandbox processes at most; past it calls wait. @default 32 */
  maxProcesses?: number;
  /** Processes one principal's work may spread over. @default the CPU count */
  processesPerPrincipal?: number;
  /** Longest wait for a process under `maxProcesses`, in ms. @default 30000 */
  processWaitMs?: number;
  /** Longest result kept, in characters of JSON; longer is cut. @default 1048576 */
  maxResultBytes: number;
  /** Discovery cache folder, or null for none. @default ".skillbox-cache" */
  cacheDir: string | null;
  /**
   * OS confinement of sandbox processes (bubblewrap namespaces): `"auto"`
   * uses it when it works, `"required"` refuses to start without it.
   * @default "auto"
   */
  confinement?: "auto" | "required" | "off";
  /**
   * A skill script's workspace (`/work` and `/tmp` together) is a tmpfs of
   * this many MiB in the script's namespace: the kernel's quota.
   * @default 64
   */
  scriptWorkspaceMb?: number;
  /** Files and folders in that tmpfs, at most. @default 10000 */
  scriptWorkspaceFiles?: number;
}

/**
 * An operator secret sent as a header to one host only (`ctx.fetch`).
 *
 * @example Bind a token to one API host
 * ```ts
 * import { parseConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const { egress } = parseConfig(`{ "egress": { "secrets": [{
 *   "host": "api.example.com",
 *   "header": "Authorization",
 *   "value_env": "EXAMPLE_API_TOKEN"
 * }] } }`);
 * assert.deepEqual(egress.secrets, [{
 *   host: "api.example.com",
 *   header: "Authorization",
 *   valueEnv: "EXAMPLE_API_TOKEN",
 *   toolkits: [],
 * }]);
 * assert.throws(
 *   () =>
 *     parseConfig(`{ "egress": { "secrets": [{
 *       "host": "api.example.com", "header": "X Key", "value_env": "K"
 *     }] } }`),
 *   /egress\.secrets\.0\.header/,
 * );
 * ```
 * @example Allow plain http for a service on the host's own network
 * ```ts
 * import { parseConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const { egress } = parseConfig(`{ "egress": { "secrets": [{
 *   "host": "http://metrics.internal:9090",
 *   "header": "X-Api-Key",
 *   "value_env": "METRICS_KEY"
 * }] } }`);
 * assert.equal(egress.secrets[0]!.host, "http://metrics.internal:9090");
 * // A path would never match a request: refused at start.
 * assert.throws(
 *   () =>
 *     parseConfig(`{ "egress": { "secrets": [{
 *       "host": "https://api.example.com/v1", "header": "X-Key", "value_env": "K"
 *     }] } }`),
 *   /egress\.secrets\.0\.host/,
 * );
 * ```
 */
export interface EgressSecretConfig {
  /**
   * `name` or `name:port` the secret goes to, over `https:` only (sandbox
   * code chooses the scheme); `http://name[:port]` allows plain `http:` too.
   */
  host: string;
  /** The header it rides in. */
  header: string;
  /** The environment variable holding the value (read at start). */
  valueEnv: string;
  /** Only these toolkits' calls get it; empty: any call allowed there. @default [] */
  toolkits: string[];
}

/**
 * How the host performs requests for sandboxes (`ctx.fetch`).
 *
 * @example Allow a local service, keep the default caps
 * ```ts
 * import { parseConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const { egress } = parseConfig(
 *   '{ "egress": { "allow_private_hosts": ["localhost:11434"] } }',
 * );
 * assert.deepEqual(egress.allowPrivateHosts, ["localhost:11434"]);
 * assert.equal(egress.maxResponseBytes, 8 * 1024 * 1024);
 * assert.equal(egress.timeoutSeconds, 30);
 * ```
 */
export interface EgressConfig {
  /** Hosts allowed to resolve to loopback, private or link-local addresses. @default [] */
  allowPrivateHosts: string[];
  /** Secrets bound to hosts. @default [] */
  secrets: EgressSecretConfig[];
  /** Most response body bytes returned. @default 8388608 */
  maxResponseBytes: number;
  /** Whole request limit, redirects included. @default 30 */
  timeoutSeconds: number;
  /**
   * `ctx.fetch` requests the host runs at once for all calls, each holding
   * up to `maxResponseBytes`; turns go fairly to tokens, then sessions.
   * @default 32
   */
  maxParallelHost?: number;
}

/**
 * Who sees what in the console and `/api/*` (issue 22).
 *
 * @example An admin token must also be an accepted token
 * ```ts
 * import { parseConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const config = parseConfig(
 *   '{ "tokens": ["ops", "agent"], "console": { "admin_tokens": ["ops"] } }',
 * );
 * assert.deepEqual(config.console?.adminTokens, ["ops"]);
 * assert.throws(
 *   () => parseConfig('{ "console": { "admin_tokens": ["ops"] } }'),
 *   /console\.admin_tokens\.0: not one of "tokens"/,
 * );
 * ```
 */
export interface ConsoleConfig {
  /**
   * Tokens (each also in `tokens`) whose console and API see every run,
   * live event, session and sandbox process; any other token sees its own
   * sessions' work only. @default []
   */
  adminTokens: string[];
}

/**
 * The whole host configuration, with every default applied.
 *
 * @example Parse a config, then run a host on it
 * ```ts
 * import { parseConfig } from "./config.ts";
 * import { createHost } from "./host.ts";
 * import assert from "node:assert/strict";
 * const config = parseConfig('{ "tokens": ["s3cret"] } // JSONC');
 * assert.deepEqual(config.skills, ["./skills"]);
 * assert.equal(config.limits.maxSessions, 1024);
 * const host = createHost({ config, capabilities: [] });
 * // With tokens set, MCP clients must bring one.
 * const mcp = await host.fetch(
 *   new Request("http://127.0.0.1:8787/mcp", { method: "POST", body: "{}" }),
 * );
 * assert.equal(mcp.status, 401);
 * await host.close();
 * ```
 */
export interface HostConfig {
  /** Where `host.listen()` serves by default. */
  listen: ListenConfig;
  /** Directories skills are loaded from. @default ["./skills"] */
  skills: string[];
  /** Accepted auth tokens; empty means no auth. @default [] */
  tokens: string[];
  /** The limits the host enforces. */
  limits: LimitsConfig;
  /** Serve skillbox's own `skills/` folder too (`source: "system"`). @default true */
  builtinSkills: boolean;
  /** Skills the operator archived: hidden from discover, calls refused. @default [] */
  archivedSkills: string[];
  /** How sandbox processes are run. */
  sandbox: SandboxConfig;
  /** How the host performs requests for sandboxes. */
  egress: EgressConfig;
  /**
   * The permission and tool policy, as written; validated by
   * `parseHostPolicy` (see `runtime/tools/policy.ts`). @default {}
   */
  policy: Record<string, unknown>;
  /** Toolkit configurations applied to every session, by toolkit name. @default {} */
  toolkits: Record<string, Record<string, unknown>>;
  /** LLM providers (the wire's `LLMConfig` shape). @default [] */
  llm: LlmConfig[];
  /** The `llm` object form's rules (runtime/llm/config.ts). */
  llmRules: LlmRules;
  /**
   * MCP servers imported as toolkits, by toolkit name: `{command, args,
   * env, cwd, writable, hosts, read, write}` (stdio; `hosts` reached only
   * through the egress proxy; `read`/`write` more paths seen confined) or
   * `{url, headers}` (Streamable HTTP).
   * @default {}
   */
  mcpServers?: Record<string, McpServerSpec>;
  /**
   * How imported servers that fail or crash are retried in the background:
   * the first wait, doubling up to the cap. @default { retryInitialMs: 1000,
   * retryMaxMs: 300000 }
   */
  mcp?: { retryInitialMs: number; retryMaxMs: number };
  /** The run history (see `runtime/store/config.ts`); null keeps nothing. */
  store: StoreConfig | null;
  /** Who sees what in the console. @default { adminTokens: [] } */
  console?: ConsoleConfig;
  /**
   * This host in a fleet sharing one store (issue 26): `id` names its
   * runs. @default { id: null } (`hostname:port`)
   */
  host?: { id: string | null };
  /**
   * Code mode (`run_code`, issue 25): `maxCalls` bounds the inner calls of
   * one run. @default { maxCalls: 1000 }
   */
  code?: { maxCalls: number };
}

// Deno fires a timer longer than 2^31-1 ms after 1 ms: a longer duration
// would end every handshake, stream or call at once.
const MAX_TIMER_MS = 2 ** 31 - 1;
const seconds = z.number().max(Math.floor(MAX_TIMER_MS / 1000));
const millis = z.number().int().positive().max(MAX_TIMER_MS);

const ConfigFileSchema = z.strictObject({
  $schema: z.string().optional(),
  listen: z.strictObject({
    hostname: z.string().min(1).default("127.0.0.1"),
    port: z.number().int().min(0).max(65535).default(8787),
    allowed_hosts: z.array(
      z.string().regex(
        /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(:\d{1,5})?$/,
        "expected a host name, optionally with :port",
      ),
    ).default([]),
    allowed_origins: z.array(
      z.string().regex(
        /^https?:\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(:\d{1,5})?$/,
        "expected an origin, scheme://host[:port]",
      ),
    ).default([]),
  }).prefault({}),
  skills: z.array(z.string().min(1)).default(["./skills"]),
  tokens: z.array(z.string().min(1)).default([]),
  limits: z.strictObject({
    max_message_bytes: z.number().int().min(1024).default(4 * 1024 * 1024),
    max_sessions: z.number().int().positive().default(1024),
    max_pending_sessions: z.number().int().positive().default(128),
    handshake_timeout_seconds: seconds.positive().default(10),
    max_parallel: z.number().int().positive().default(4),
    max_parallel_host: z.number().int().positive().default(64),
    mcp_reads_per_token: z.number().int().positive().default(4),
    sse_idle_seconds: seconds.positive().default(300),
    shutdown_timeout_seconds: seconds.nonnegative().default(10),
    request_body_seconds: seconds.positive().default(60),
    max_turns: z.number().int().positive().default(50),
    default_max_turns: z.number().int().positive().default(10),
  }).prefault({}),
  builtin_skills: z.boolean().default(true),
  archived_skills: z.array(z.string().min(1)).default([]),
  sandbox: z.strictObject({
    memory_mb: z.number().int().min(32).default(512),
    max_idle_processes: z.number().int().nonnegative().default(8),
    spare_workers: z.number().int().nonnegative().default(1),
    spare_processes: z.number().int().nonnegative().default(1),
    worker_budget_mb: z.number().int().min(8).default(1024),
    max_processes: z.number().int().positive().default(32),
    processes_per_principal: z.number().int().positive().nullable().default(
      null,
    ),
    process_wait_ms: millis.default(30_000),
    max_result_bytes: z.number().int().min(1024).default(1024 * 1024),
    cache_dir: z.string().min(1).nullable().default(".skillbox-cache"),
    confinement: z.enum(["auto", "required", "off"]).default("auto"),
    script_workspace_mb: z.number().int().min(1).max(65536)
      .default(DEFAULT_WORKSPACE_QUOTA.bytes / (1024 * 1024)),
    script_workspace_files: z.number().int().min(16).max(10_000_000)
      .default(DEFAULT_WORKSPACE_QUOTA.files),
  }).prefault({}),
  egress: z.strictObject({
    allow_private_hosts: z.array(z.string().min(1)).default([]),
    secrets: z.array(z.strictObject({
      host: z.string().regex(
        /^(https?:\/\/)?[^/\s]+\/?$/i,
        "expected a host name, optionally with :port, after http:// or https://",
      ),
      header: z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/),
      value_env: z.string().min(1),
      toolkits: z.array(z.string().min(1)).default([]),
    })).default([]),
    max_response_bytes: z.number().int().min(1).default(8 * 1024 * 1024),
    timeout_seconds: seconds.positive().default(30),
    max_parallel_host: z.number().int().positive().default(32),
  }).prefault({}),
  policy: z.record(z.string(), z.unknown()).default({}),
  toolkits: z.record(z.string(), z.record(z.string(), z.unknown())).default(
    {},
  ),
  llm: LLM_SECTION, // the providers array, or {providers, ...rules}
  mcp_servers: z.record(
    z.string().regex(/^[A-Za-z0-9_.-]{1,32}$/),
    z.union([
      z.strictObject({
        command: z.string().min(1),
        args: z.array(z.string()).default([]),
        env: z.record(z.string(), z.string()).default({}),
        cwd: z.string().min(1).optional(),
        writable: z.boolean().default(false),
        // Reached only through the egress proxy, under its address rules.
        hosts: z.array(z.string().min(1)).default([]),
        start_timeout_ms: millis.optional(),
        // Confined: more paths seen read-only, and the only writable ones.
        read: z.array(z.string().min(1)).default([]),
        write: z.array(z.string().min(1)).default([]),
      }),
      z.strictObject({
        url: z.url(),
        headers: z.record(z.string(), z.string()).default({}),
        start_timeout_ms: millis.optional(),
      }),
    ]),
  ).default({}),
  mcp: z.strictObject({
    retry_initial_ms: millis.default(1_000),
    retry_max_ms: millis.default(300_000),
  }).prefault({}),
  store: StoreConfigSchema,
  console: z.strictObject({
    admin_tokens: z.array(z.string().min(1)).default([]),
  }).prefault({}),
  host: z.strictObject({
    id: z.string().min(1).max(200).nullable().default(null),
  }).prefault({}),
  code: z.strictObject({
    max_calls: z.number().int().positive().default(1000),
  }).prefault({}),
});

type ConfigFile = z.infer<typeof ConfigFileSchema>;

// The keys of `policy`, each read by its owner: the tools policy, the token
// quotas, the script interpreters.
const POLICY_KEYS = new Set([
  "tools",
  "permissions",
  "max_timeout_seconds",
  "tokens",
  "interpreters",
]);

/**
 * Checks a parsed config file against the schema (and the policy and LLM
 * sections against their own modules), then maps it onto a
 * {@link HostConfig} with every default applied.
 *
 * @param value the parsed file (undefined reads as `{}`)
 * @param file the file name used in error messages
 * @returns the config the host runs on
 * @throws {ConfigError} `file: field.path: problem` for the first violation
 * @example Defaults fill what the file leaves out; a typo is named
 * ```ts
 * import { validateConfig } from "./config_schema.ts";
 * import assert from "node:assert/strict";
 * assert.equal(validateConfig({ listen: { port: 9000 } }, "a.jsonc").listen.hostname, "127.0.0.1");
 * assert.throws(() => validateConfig({ limit: {} }, "a.jsonc"), /^ConfigError: a\.jsonc: /);
 * ```
 */
export function validateConfig(value: unknown, file: string): HostConfig {
  const parsed = ConfigFileSchema.safeParse(value ?? {});
  if (!parsed.success) {
    throw new ConfigError(`${file}: ${describeZodError(parsed.error)}`);
  }
  const data = parsed.data;
  // By index, never by value: the value is a secret. A set, not
  // `tokens.includes` per admin token: that compared n² strings, hours for
  // a large file of them.
  const accepted = new Set(data.tokens);
  const stray = data.console.admin_tokens.findIndex((t) => !accepted.has(t));
  if (stray >= 0) {
    throw new ConfigError(
      `${file}: console.admin_tokens.${stray}: not one of "tokens" (an admin token must also be an accepted token)`,
    );
  }
  // Strict, unlike the records its owners read loosely: a mistyped key
  // would never apply, and a typo here weakens a security setting. A token
  // written as a key is named as such, never printed.
  const unknown = Object.keys(data.policy).find((k) => !POLICY_KEYS.has(k));
  if (unknown !== undefined) {
    const key = accepted.has(unknown) ? "<token>" : unknown;
    throw new ConfigError(
      `${file}: policy.${key}: not a policy setting (one of ${
        [...POLICY_KEYS].join(", ")
      })`,
    );
  }
  const { entries, path, rules } = readLlmSection(data.llm);
  let llm: LlmConfig[];
  // The policy and LLM sections belong to their modules; check them here so
  // a bad file fails at start with its field path, not at the first call.
  try {
    parseHostPolicy(data.policy);
    parseTokenQuotas(data.policy, data.tokens);
    parseInterpreters(data.policy);
    llm = entries.map((entry, i) => checkLlmConfig(entry, `${path}.${i}`));
  } catch (error) {
    const message = (error as Error).message;
    throw new ConfigError(
      `${file}: ${message.replace(/^Invalid host policy: /, "")}`,
    );
  }
  return { ...toHostConfig(data), llm, llmRules: rules };
}

// The file's snake_case names of one section as the host's camelCase ones,
// one level deep: a value that maps names of its own (an `env`, `headers`)
// keeps them as written.
type Camel<S extends string> = S extends `${infer A}_${infer B}`
  ? `${A}${Capitalize<Camel<B>>}`
  : S;
type CamelKeys<T> = { [K in keyof T as K extends string ? Camel<K> : K]: T[K] };

function camelKeys<T extends object>(section: T): CamelKeys<T> {
  return fromWire(section as JsonObject) as CamelKeys<T>;
}

// Every section but the LLM one, which validateConfig has read already.
function toHostConfig(data: ConfigFile): Omit<HostConfig, "llm" | "llmRules"> {
  return {
    listen: camelKeys(data.listen),
    skills: data.skills,
    tokens: data.tokens,
    limits: camelKeys(data.limits),
    builtinSkills: data.builtin_skills,
    archivedSkills: data.archived_skills,
    sandbox: {
      ...camelKeys(data.sandbox),
      processesPerPrincipal: data.sandbox.processes_per_principal ?? undefined,
    },
    egress: {
      ...camelKeys(data.egress),
      secrets: data.egress.secrets.map(camelKeys),
    },
    policy: data.policy,
    toolkits: data.toolkits,
    mcpServers: Object.fromEntries(
      Object.entries(data.mcp_servers).map((
        [name, spec],
      ) => [name, camelKeys(spec)]),
    ),
    mcp: {
      retryInitialMs: data.mcp.retry_initial_ms,
      retryMaxMs: Math.max(data.mcp.retry_max_ms, data.mcp.retry_initial_ms),
    },
    store: toStoreConfig(data.store),
    console: camelKeys(data.console),
    host: data.host,
    code: camelKeys(data.code),
  };
}
