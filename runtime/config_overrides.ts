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
  const env = options.env ?? {};
  const flags = options.flags ?? {};
  // The file refuses an empty value too; `--token "$UNSET"` would
  // otherwise make a host no client can sign in to.
  const named = [
    ["--hostname", [flags.hostname]],
    ["--skills", flags.skills],
    ["--token", flags.tokens],
  ] as const;
  for (const [flag, values] of named) {
    if (values?.includes("")) {
      throw new ConfigError(`Invalid ${flag} "": expected a non-empty value`);
    }
  }
  // A list naming no token (only commas or spaces) is ignored as an empty
  // variable is: replacing the file's tokens with none would turn auth off.
  const envTokens = (env.SKILLBOX_TOKENS ?? "").split(",").map((t) => t.trim())
    .filter((t) => t !== "");
  // Lowest precedence first: a later one wins. An empty variable or list
  // sets nothing.
  const given: [Setting, string, unknown][] = [
    ["listen.hostname", "SKILLBOX_HOSTNAME", env.SKILLBOX_HOSTNAME],
    [
      "listen.port",
      "SKILLBOX_PORT",
      env.SKILLBOX_PORT && parsePort(env.SKILLBOX_PORT, "SKILLBOX_PORT"),
    ],
    ["tokens", "SKILLBOX_TOKENS", envTokens],
    ["store.url", "SKILLBOX_STORE_URL", env.SKILLBOX_STORE_URL],
    ["listen.hostname", "--hostname", flags.hostname],
    ["listen.port", "--port", flags.port],
    ["skills", "--skills", flags.skills],
    ["tokens", "--token", flags.tokens],
  ];
  const out: HostConfig = structuredClone(config);
  const overrides: Record<string, string> = {};
  for (const [setting, source, value] of given) {
    // An empty string or list has length 0 (a port has none).
    if (value === undefined || (value as string[]).length === 0) continue;
    set(out, setting, Array.isArray(value) ? [...value] : value);
    overrides[setting] = source;
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

// The settings a variable or a flag overrides.
type Setting =
  | "listen.hostname"
  | "listen.port"
  | "tokens"
  | "skills"
  | "store.url";

function set(out: HostConfig, setting: Setting, value: unknown): void {
  const [key, field] = setting.split(".") as [keyof HostConfig, string?];
  const sections = out as unknown as Record<string, Record<string, unknown>>;
  // A store turned off (`store: null`) is turned on with its defaults.
  if (key === "store") {
    out.store ??= toStoreConfig(StoreConfigSchema.parse(undefined))!;
  }
  if (field === undefined) (sections as Record<string, unknown>)[key] = value;
  else sections[key]![field] = value;
}
