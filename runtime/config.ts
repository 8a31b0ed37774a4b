/**
 * The host configuration: `skillbox.jsonc` parsed with `jsonc-parser`,
 * validated with zod, then overridden by `SKILLBOX_*` environment variables
 * and CLI flags.
 *
 * Precedence, highest first: CLI flags, then `SKILLBOX_*` environment
 * variables, then the config file, then defaults. Nothing is overridden
 * silently: {@link resolveConfig} reports where every overridden setting came
 * from, and the CLI prints it in its banner.
 *
 * | variable | overrides |
 * |---|---|
 * | `SKILLBOX_CONFIG` | the config file path (`--config` wins) |
 * | `SKILLBOX_HOSTNAME` | `listen.hostname` |
 * | `SKILLBOX_PORT` | `listen.port` |
 * | `SKILLBOX_TOKENS` | `tokens` (comma-separated; replaces the file's list) |
 *
 * @module
 */

import { parse, type ParseError, printParseErrorCode } from "jsonc-parser";
import { z } from "zod";
import { checkLlmConfig, type LlmConfig } from "./llm/config.ts";
import { describeZodError } from "../protocol/messages.ts";
import { parseHostPolicy } from "./tools/policy.ts";

/** The listen address. */
export interface ListenConfig {
  /** The interface to listen on. @default "127.0.0.1" */
  hostname: string;
  /** 0 picks a free port. @default 8787 */
  port: number;
}

/** The limits the host enforces. */
export interface LimitsConfig {
  /** Largest message accepted, in UTF-8 bytes. @default 4194304 */
  maxMessageBytes: number;
  /** Live sessions at once; more are refused. @default 1024 */
  maxSessions: number;
  /** Capability requests one session runs at once (queued beyond). @default 4 */
  maxParallel: number;
  /** Capability requests running at once across sessions. @default 64 */
  maxParallelHost: number;
  /** An HTTP+SSE transport session with no stream and no request for this long expires. @default 300 */
  sseIdleSeconds: number;
  /** How long `close()` waits for in-flight calls. @default 10 */
  shutdownTimeoutSeconds: number;
  /** The most LLM turns any skill may take (caps `max_turns`). @default 50 */
  maxTurns: number;
  /** `max_turns` of a skill that sets none. @default 10 */
  defaultMaxTurns: number;
}

/** How sandbox processes are run. */
export interface SandboxConfig {
  /** Heap cap per sandbox process, in MiB. @default 512 */
  memoryMb: number;
  /** Idle sandbox processes kept warm (least recently used retired). @default 8 */
  maxIdleProcesses: number;
  /** Spare workers kept started in each process. @default 1 */
  spareWorkers: number;
  /** Longest result kept, in characters of JSON; longer is cut. @default 1048576 */
  maxResultBytes: number;
  /** Discovery cache folder, or null for none. @default ".skillbox-cache" */
  cacheDir: string | null;
}

/** The whole host configuration, with every default applied. */
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
  /**
   * The permission and tool policy, as written; validated by
   * `parseHostPolicy` (see `runtime/tools/policy.ts`). @default {}
   */
  policy: Record<string, unknown>;
  /** Toolkit configurations applied to every session, by toolkit name. @default {} */
  toolkits: Record<string, Record<string, unknown>>;
  /** LLM providers (the wire's `LLMConfig` shape). @default [] */
  llm: LlmConfig[];
}

const loose = z.record(z.string(), z.unknown()).default({});

const LIMIT_DEFAULTS = {
  max_message_bytes: 4 * 1024 * 1024,
  max_sessions: 1024,
  max_parallel: 4,
  max_parallel_host: 64,
  sse_idle_seconds: 300,
  shutdown_timeout_seconds: 10,
  max_turns: 50,
  default_max_turns: 10,
};

const SANDBOX_DEFAULTS = {
  memory_mb: 512,
  max_idle_processes: 8,
  spare_workers: 1,
  max_result_bytes: 1024 * 1024,
  cache_dir: ".skillbox-cache" as string | null,
};

const ConfigFileSchema = z.strictObject({
  $schema: z.string().optional(),
  listen: z.strictObject({
    hostname: z.string().min(1).default("127.0.0.1"),
    port: z.number().int().min(0).max(65535).default(8787),
  }).default({ hostname: "127.0.0.1", port: 8787 }),
  skills: z.array(z.string().min(1)).default(["./skills"]),
  tokens: z.array(z.string().min(1)).default([]),
  limits: z.strictObject({
    max_message_bytes: z.number().int().min(1024).default(4 * 1024 * 1024),
    max_sessions: z.number().int().positive().default(1024),
    max_parallel: z.number().int().positive().default(4),
    max_parallel_host: z.number().int().positive().default(64),
    sse_idle_seconds: z.number().positive().default(300),
    shutdown_timeout_seconds: z.number().nonnegative().default(10),
    max_turns: z.number().int().positive().default(50),
    default_max_turns: z.number().int().positive().default(10),
  }).default(LIMIT_DEFAULTS),
  builtin_skills: z.boolean().default(true),
  archived_skills: z.array(z.string().min(1)).default([]),
  sandbox: z.strictObject({
    memory_mb: z.number().int().min(32).default(512),
    max_idle_processes: z.number().int().nonnegative().default(8),
    spare_workers: z.number().int().nonnegative().default(1),
    max_result_bytes: z.number().int().min(1024).default(1024 * 1024),
    cache_dir: z.string().min(1).nullable().default(".skillbox-cache"),
  }).default(SANDBOX_DEFAULTS),
  policy: loose,
  toolkits: z.record(z.string(), z.record(z.string(), z.unknown())).default(
    {},
  ),
  llm: z.array(z.unknown()).default([]),
});

/** A config that cannot be read, parsed or validated; the message says where. */
export class ConfigError extends Error {
  /**
   * @param message `file:line:column: problem` or `file: field.path: problem`
   * @param options `cause`
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ConfigError";
  }
}

/**
 * Returns the configuration with every default applied.
 *
 * @returns a fresh default config
 * @example Read a default
 * ```ts
 * import { defaultConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.equal(defaultConfig().limits.maxParallel, 4);
 * ```
 */
export function defaultConfig(): HostConfig {
  return parseConfig("{}");
}

/**
 * Parses and validates the text of a `skillbox.jsonc`.
 *
 * @param text the JSONC text (comments and trailing commas allowed)
 * @param file the file name used in error messages
 * @returns the config, defaults applied
 * @throws {ConfigError} on a syntax error (with line and column) or a schema
 *   error (with the field path)
 * @example Parse, then fail on a typo
 * ```ts
 * import { ConfigError, parseConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const config = parseConfig('{ "listen": { "port": 9000 }, // comment\n }');
 * assert.equal(config.listen.port, 9000);
 * assert.throws(() => parseConfig('{ "limits": { "max_parallel": "4" } }'), /limits\.max_parallel/);
 * assert.throws(() => parseConfig('{\n  "listen": }', "a.jsonc"), ConfigError);
 * ```
 */
export function parseConfig(
  text: string,
  file = "skillbox.jsonc",
): HostConfig {
  const errors: ParseError[] = [];
  const value = parse(text, errors, {
    allowTrailingComma: true,
    disallowComments: false,
  });
  const first = errors[0];
  if (first) {
    const { line, column } = lineColumn(text, first.offset);
    throw new ConfigError(
      `${file}:${line}:${column}: ${
        describeParseError(printParseErrorCode(first.error))
      }`,
    );
  }
  const parsed = ConfigFileSchema.safeParse(value ?? {});
  if (!parsed.success) {
    throw new ConfigError(`${file}: ${describeZodError(parsed.error)}`);
  }
  const data = parsed.data;
  // The policy and LLM sections belong to their modules; check them here so
  // a bad file fails at start with its field path, not at the first call.
  try {
    parseHostPolicy(data.policy);
  } catch (error) {
    throw new ConfigError(
      `${file}: ${
        (error as Error).message.replace(/^Invalid host policy: /, "")
      }`,
    );
  }
  let llm: LlmConfig[];
  try {
    llm = data.llm.map((entry, i) => checkLlmConfig(entry, `llm.${i}`));
  } catch (error) {
    throw new ConfigError(`${file}: ${(error as Error).message}`);
  }
  return {
    listen: { ...data.listen },
    skills: data.skills,
    tokens: data.tokens,
    limits: {
      maxMessageBytes: data.limits.max_message_bytes,
      maxSessions: data.limits.max_sessions,
      maxParallel: data.limits.max_parallel,
      maxParallelHost: data.limits.max_parallel_host,
      sseIdleSeconds: data.limits.sse_idle_seconds,
      shutdownTimeoutSeconds: data.limits.shutdown_timeout_seconds,
      maxTurns: data.limits.max_turns,
      defaultMaxTurns: data.limits.default_max_turns,
    },
    builtinSkills: data.builtin_skills,
    archivedSkills: data.archived_skills,
    sandbox: {
      memoryMb: data.sandbox.memory_mb,
      maxIdleProcesses: data.sandbox.max_idle_processes,
      spareWorkers: data.sandbox.spare_workers,
      maxResultBytes: data.sandbox.max_result_bytes,
      cacheDir: data.sandbox.cache_dir,
    },
    policy: data.policy,
    toolkits: data.toolkits,
    llm,
  };
}

/**
 * Reads and parses a config file.
 *
 * @param path the file
 * @returns the config, defaults applied
 * @throws {ConfigError} when the file cannot be read or is invalid
 * @example Load a file
 * ```ts
 * import { loadConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".jsonc" });
 * await Deno.writeTextFile(path, '{ "tokens": ["t1"] }');
 * assert.deepEqual((await loadConfig(path)).tokens, ["t1"]);
 * await Deno.remove(path);
 * ```
 */
export async function loadConfig(path: string): Promise<HostConfig> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new ConfigError(
      `Cannot read config "${path}": ${(error as Error).message}`,
      { cause: error },
    );
  }
  return parseConfig(text, path);
}

/** Settings given on the command line; unset fields leave the config alone. */
export interface ConfigFlags {
  hostname?: string;
  port?: number;
  /** Replaces the config's skills dirs when non-empty. */
  skills?: string[];
  /** Replaces the config's tokens when non-empty. */
  tokens?: string[];
}

/** A resolved config and where its overridden settings came from. */
export interface ResolvedConfig {
  config: HostConfig;
  /** Setting name → source, e.g. `{ "listen.port": "SKILLBOX_PORT" }`. */
  overrides: Record<string, string>;
}

/**
 * Applies environment variables, then flags, over a config (see the module
 * doc for precedence).
 *
 * @param config the config from the file (or {@link defaultConfig})
 * @param options the flags and the environment to read
 * @returns the final config and the overrides applied
 * @throws {ConfigError} when an environment variable is malformed
 * @example Flags beat the environment
 * ```ts
 * import { defaultConfig, resolveConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const { config, overrides } = resolveConfig(defaultConfig(), {
 *   flags: { port: 9001 },
 *   env: { SKILLBOX_PORT: "9000", SKILLBOX_HOSTNAME: "0.0.0.0" },
 * });
 * assert.equal(config.listen.port, 9001);
 * assert.equal(overrides["listen.port"], "--port");
 * assert.equal(overrides["listen.hostname"], "SKILLBOX_HOSTNAME");
 * ```
 */
export function resolveConfig(
  config: HostConfig,
  options: { flags?: ConfigFlags; env?: Record<string, string | undefined> },
): ResolvedConfig {
  const env = options.env ?? {};
  const flags = options.flags ?? {};
  const out: HostConfig = structuredClone(config);
  const overrides: Record<string, string> = {};

  if (env.SKILLBOX_HOSTNAME) {
    out.listen.hostname = env.SKILLBOX_HOSTNAME;
    overrides["listen.hostname"] = "SKILLBOX_HOSTNAME";
  }
  if (env.SKILLBOX_PORT) {
    out.listen.port = parsePort(env.SKILLBOX_PORT, "SKILLBOX_PORT");
    overrides["listen.port"] = "SKILLBOX_PORT";
  }
  if (env.SKILLBOX_TOKENS) {
    out.tokens = env.SKILLBOX_TOKENS.split(",").map((t) => t.trim())
      .filter((t) => t !== "");
    overrides.tokens = "SKILLBOX_TOKENS";
  }
  if (flags.hostname !== undefined) {
    out.listen.hostname = flags.hostname;
    overrides["listen.hostname"] = "--hostname";
  }
  if (flags.port !== undefined) {
    out.listen.port = flags.port;
    overrides["listen.port"] = "--port";
  }
  if (flags.skills && flags.skills.length > 0) {
    out.skills = [...flags.skills];
    overrides.skills = "--skills";
  }
  if (flags.tokens && flags.tokens.length > 0) {
    out.tokens = [...flags.tokens];
    overrides.tokens = "--token";
  }
  return { config: out, overrides };
}

/**
 * Parses a TCP port number.
 *
 * @param text the value as given
 * @param source the flag or variable it came from, for the error message
 * @returns the port
 * @throws {ConfigError} when it is not an integer in 0..65535
 * @example Parse a port
 * ```ts
 * import { parsePort } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parsePort("8080", "--port"), 8080);
 * assert.throws(() => parsePort("http", "--port"), /--port/);
 * ```
 */
export function parsePort(text: string, source: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) {
    throw new ConfigError(
      `Invalid ${source} "${text}": expected a port number from 0 to 65535`,
    );
  }
  return port;
}

function lineColumn(text: string, offset: number) {
  const before = text.slice(0, offset).split("\n");
  return {
    line: before.length,
    column: (before[before.length - 1]?.length ?? 0) + 1,
  };
}

// jsonc-parser names errors in PascalCase ("ValueExpected"): make a sentence.
function describeParseError(code: string): string {
  const words = code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
