/**
 * Toolkit configurations: the ones in the host config (every session), and
 * the ones a session set with `toolkit/configure` (that session only, kept in
 * its `state`). Shared by the toolkits capability, which sets them, and the
 * tools capability, which hands them to a toolkit's own tools as `ctx.config`.
 *
 * @module
 */

import type { SessionScope } from "../capability.ts";
import type { ToolkitEntry } from "../registry/types.ts";
import { validateValue } from "../schema/validator.ts";
import { secretValues } from "./secrets.ts";
import { isPlainObject } from "../../protocol/json.ts";

/** A toolkit's configuration as a session will see it. */
export interface SessionToolkitConfig {
  /** True once the session configured it or the host config does. */
  configured: boolean;
  /** Schema defaults, then host config, then the session's configuration. */
  config: Record<string, unknown>;
  /**
   * Why the toolkit's tools cannot run with this configuration (a required
   * field missing, a bad value), or null. Never quotes a value.
   */
  problem: string | null;
  /** The secret values in `config`, for scrubbing what leaves the host. */
  secrets: readonly string[];
}

/** The toolkit configurations of the host and its sessions. */
export interface ToolkitConfigs {
  /**
   * Stores a session's configuration (replacing an earlier one) after
   * checking it, merged over defaults and host config, against the schema
   * and the bound on its secret values.
   *
   * @returns null when stored, else why not (field paths, no values)
   */
  configure(
    session: SessionScope,
    toolkit: ToolkitEntry,
    config: Record<string, unknown>,
  ): string | null;
  /** The configuration a session's call of the toolkit's tools gets. */
  resolve(session: SessionScope, toolkit: ToolkitEntry): SessionToolkitConfig;
}

const STATE_KEY = "toolkits";
// A session's own configurations (its state under STATE_KEY), by toolkit.
type OwnConfigs = Map<string, Record<string, unknown>>;

/**
 * Creates the configuration store.
 *
 * @param preconfigured the host config's `toolkits` section: toolkit name →
 *   configuration, applied to every session
 * @returns the store
 * @throws {TypeError} when a section entry is not an object
 * @example Host config, then a session's own
 * ```ts
 * import { createToolkitConfigs } from "./configs.ts";
 * import assert from "node:assert/strict";
 * const configs = createToolkitConfigs({ fs: { root: "/data" } });
 * const kit = {
 *   kind: "toolkit" as const, name: "fs", alias: "", description: "", category: "", tags: [],
 *   iconSvg: null, version: "1.0.0", tools: [], path: "/s/fs/toolkit.ts", export: "default",
 *   hash: "h", origin: "builtin" as const, permissions: {},
 *   configSchema: { type: "object", properties: { root: { type: "string" }, writable: { type: "boolean", default: false } }, required: ["root"] },
 * };
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * assert.deepEqual(configs.resolve(session, kit).config, { writable: false, root: "/data" });
 * assert.equal(configs.configure(session, kit, { root: 5 }), '"root" must be of type string, got number');
 * assert.equal(configs.configure(session, kit, { writable: true }), null);
 * assert.deepEqual(configs.resolve(session, kit).config, { writable: true, root: "/data" });
 * ```
 */
export function createToolkitConfigs(
  preconfigured: Record<string, unknown> = {},
): ToolkitConfigs {
  const host = new Map<string, Record<string, unknown>>();
  for (const [name, value] of Object.entries(preconfigured)) {
    if (!isPlainObject(value)) {
      throw new TypeError(
        `Invalid host config: "toolkits.${name}" must be an object`,
      );
    }
    host.set(name, value);
  }

  const sessionMap = (session: SessionScope) =>
    session.state.getOrInsertComputed(STATE_KEY, () => new Map()) as OwnConfigs;

  const merge = (
    kit: ToolkitEntry,
    own: Record<string, unknown> | undefined,
  ) => ({ ...defaults(kit.configSchema), ...host.get(kit.name), ...own });

  const check = (kit: ToolkitEntry, config: Record<string, unknown>) => {
    let result;
    try {
      result = validateValue(kit.configSchema, config);
    } catch {
      return `Toolkit "${kit.name}" has an invalid configuration schema`;
    }
    // validateValue never quotes values, so the message is safe as it is
    // (scrubbing it would garble words that happen to equal a short secret).
    return result.valid ? null : result.message;
  };

  // Resolved configurations by toolkit version, then by the session's own
  // configuration object: configure() stores a private copy and replaces it,
  // never edits it, so a new version or a new configuration is a miss. This
  // keeps merging, validation and the secrets walk off the per-call path.
  const resolvedCache = new WeakMap<
    ToolkitEntry,
    WeakMap<Record<string, unknown>, SessionToolkitConfig>
  >();
  const hostOnly: Record<string, unknown> = {};

  return {
    configure(session, kit, config) {
      const merged = merge(kit, config);
      const problem = check(kit, merged) ?? tooManySecrets(kit, merged);
      if (problem === null) {
        sessionMap(session).set(kit.name, structuredClone(config));
      }
      return problem;
    },
    resolve(session, kit) {
      const own = sessionMap(session).get(kit.name);
      const byOwn = resolvedCache.getOrInsertComputed(kit, () => new WeakMap());
      return byOwn.getOrInsertComputed(own ?? hostOnly, () => {
        const config = merge(kit, own);
        return Object.freeze({
          configured: own !== undefined || host.has(kit.name),
          // Shared by every call that resolves the same: frozen against edits.
          config: Object.freeze(config),
          problem: check(kit, config),
          secrets: Object.freeze(secretValues(kit.configSchema, config)),
        }) as SessionToolkitConfig;
      });
    },
  };
}

/**
 * The most secret values a session's configuration of one toolkit
 * (merged over the host's) may hold. Every string a call of its tools
 * returns or reports is scrubbed of each value in turn: 50,000 of them
 * (750 KB of JSON, which a session may send) held the host's thread for
 * 100 s per megabyte of a tool's output.
 */
const MAX_SECRET_VALUES = 256;

// Why a session's configuration holds too many secret values, or null.
function tooManySecrets(
  kit: ToolkitEntry,
  config: Record<string, unknown>,
): string | null {
  const count = secretValues(kit.configSchema, config).length;
  return count <= MAX_SECRET_VALUES
    ? null
    : `it holds ${count} secret values, more than the ${MAX_SECRET_VALUES} a toolkit's configuration may hold`;
}

function defaults(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const props = schema.properties;
  if (typeof props !== "object" || props === null) return out;
  for (const [name, sub] of Object.entries(props)) {
    if (typeof sub === "object" && sub !== null && "default" in sub) {
      out[name] = structuredClone((sub as { default: unknown }).default);
    }
  }
  return out;
}
