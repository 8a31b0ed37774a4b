/**
 * The precedence of settings over the config file: highest first, CLI
 * flags, then `SKILLBOX_*` environment variables, then the file, then
 * defaults. Nothing is overridden silently: {@link resolveConfig} reports
 * where every overridden setting came from, and the CLI prints it in its
 * banner.
 *
 * | variable | overrides |
 * |---|---|
 * | `SKILLBOX_CONFIG` | the config file path (`--config` wins; read by the CLI) |
 * | `SKILLBOX_HOSTNAME` | `listen.hostname` |
 * | `SKILLBOX_PORT` | `listen.port` |
 * | `SKILLBOX_TOKENS` | `tokens` (comma-separated; replaces the file's list) |
 * | `SKILLBOX_STORE_URL` | `store.url` (a PostgreSQL store shared by a fleet) |
 *
 * @module
 */

import { ConfigError } from "./config_error.ts";
import type { HostConfig } from "./config_schema.ts";
import { StoreConfigSchema, toStoreConfig } from "./store/config.ts";

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
 * @param config the config from the file (or `defaultConfig()`)
 * @param options the flags and the environment to read
 * @returns the final config and the overrides applied
 * @throws {ConfigError} when an environment variable is malformed or a flag
 *   value is empty
 * @example Flags beat the environment
 * ```ts
 * import { resolveConfig } from "./config_overrides.ts";
 * import { defaultConfig } from "./config.ts";
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
  const out: HostConfig = structuredClone(config);
  const overrides: Record<string, string> = {};
  applyEnv(out, overrides, options.env ?? {});
  applyFlags(out, overrides, options.flags ?? {});
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
 * import { parsePort } from "./config_overrides.ts";
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

function applyEnv(
  out: HostConfig,
  overrides: Record<string, string>,
  env: Record<string, string | undefined>,
): void {
  if (env.SKILLBOX_HOSTNAME) {
    out.listen.hostname = env.SKILLBOX_HOSTNAME;
    overrides["listen.hostname"] = "SKILLBOX_HOSTNAME";
  }
  if (env.SKILLBOX_PORT) {
    out.listen.port = parsePort(env.SKILLBOX_PORT, "SKILLBOX_PORT");
    overrides["listen.port"] = "SKILLBOX_PORT";
  }
  // A list naming no token (only commas or spaces) is ignored as an empty
  // variable is: replacing the file's tokens with none would turn auth off.
  const tokens = (env.SKILLBOX_TOKENS ?? "").split(",").map((t) => t.trim())
    .filter((t) => t !== "");
  if (tokens.length > 0) {
    out.tokens = tokens;
    overrides.tokens = "SKILLBOX_TOKENS";
  }
  if (env.SKILLBOX_STORE_URL) {
    out.store = {
      ...(out.store ?? toStoreConfig(StoreConfigSchema.parse(undefined))!),
      url: env.SKILLBOX_STORE_URL,
    };
    overrides["store.url"] = "SKILLBOX_STORE_URL";
  }
}

function applyFlags(
  out: HostConfig,
  overrides: Record<string, string>,
  flags: ConfigFlags,
): void {
  // The file refuses an empty value too; `--token "$UNSET"` would
  // otherwise make a host no client can sign in to.
  const given = [
    ["--hostname", [flags.hostname]],
    ["--skills", flags.skills],
    ["--token", flags.tokens],
  ] as const;
  for (const [flag, values] of given) {
    if (values?.includes("")) {
      throw new ConfigError(`Invalid ${flag} "": expected a non-empty value`);
    }
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
}
