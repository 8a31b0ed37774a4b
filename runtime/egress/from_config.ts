/**
 * Builds the host's egress broker from the `egress` section of the config,
 * reading each secret's value from the operator's environment once, at
 * start.
 *
 * @module
 */

import type { EgressConfig } from "../config_schema.ts";
import { EgressBroker } from "./broker.ts";

/**
 * The broker for a host configuration.
 *
 * @param config the `egress` section
 * @param env where secret values are read @default Deno.env.get
 * @returns the broker
 * @throws {TypeError} when a secret's variable is not set (a start-up
 * error: the operator named it)
 * @example
 * ```ts
 * import { brokerFromConfig } from "./from_config.ts";
 * import assert from "node:assert/strict";
 * const broker = brokerFromConfig({
 *   allowPrivateHosts: [],
 *   secrets: [{ host: "api.example.com", header: "Authorization", valueEnv: "TOKEN", toolkits: [] }],
 *   maxResponseBytes: 1024,
 *   timeoutSeconds: 5,
 * }, (name) => name === "TOKEN" ? "Bearer x" : undefined);
 * assert.ok(broker);
 * ```
 */
export function brokerFromConfig(
  config: EgressConfig,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): EgressBroker {
  const secrets = config.secrets.map((s, i) => {
    const value = env(s.valueEnv);
    if (value === undefined || value === "") {
      throw new TypeError(
        `egress.secrets.${i}: the environment variable "${s.valueEnv}" is not set`,
      );
    }
    return {
      host: s.host,
      header: s.header,
      value,
      toolkits: s.toolkits,
    };
  });
  return new EgressBroker({
    secrets,
    privateHosts: config.allowPrivateHosts,
    maxResponseBytes: config.maxResponseBytes,
    timeoutMs: config.timeoutSeconds * 1000,
  });
}
