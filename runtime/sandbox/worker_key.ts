/**
 * The key a warm worker is kept under: module path and version, session,
 * and toolkit configuration. A worker keeps its module's state between
 * calls, so calls that differ in any of these must not share one.
 *
 * @module
 */

// Keys of configuration objects already seen: resolved configurations are
// frozen and shared across calls, so a warm call costs no JSON.
const byObject = new WeakMap<object, string | Promise<string>>();
// Digests of long configurations (a digest is async: an event-loop turn),
// bounded, oldest dropped first.
const digests = new Map<string, Promise<string>>();
const MAX_DIGESTS = 256;
// Configurations up to this length key warm workers by their JSON itself.
const INLINE_CHARS = 128;

/**
 * The part of a warm worker's key that stands for a configuration: its JSON
 * when short, else a digest of it (then a promise, the first time).
 *
 * @param config the call's `ctx.config`
 * @returns the key part
 * @example Short configurations key by their JSON
 * ```ts
 * import { configKey } from "./worker_key.ts";
 * import assert from "node:assert/strict";
 * assert.equal(configKey({ a: 1 }), '{"a":1}');
 * const long = await configKey({ text: "x".repeat(200) });
 * assert.match(long, /^[0-9a-f]{24}$/);
 * ```
 */
export function configKey(
  config: Record<string, unknown>,
): string | Promise<string> {
  const known = byObject.get(config);
  if (known !== undefined) return known;
  const json = JSON.stringify(config);
  const key = json.length <= INLINE_CHARS ? json : digestOf(json);
  if (Object.isFrozen(config)) byObject.set(config, key);
  return key;
}

/**
 * The full warm-worker key.
 *
 * @param path absolute module path
 * @param version module version
 * @param session session id
 * @param config the {@link configKey} of the configuration
 * @returns the key
 * @example Another session, another worker
 * ```ts
 * import { workerKey } from "./worker_key.ts";
 * import assert from "node:assert/strict";
 * assert.notEqual(workerKey("/a.ts", "v1", "s1", "{}"), workerKey("/a.ts", "v1", "s2", "{}"));
 * ```
 */
export function workerKey(
  path: string,
  version: string,
  session: string,
  config: string,
): string {
  // JSON: no part can forge a separator.
  return JSON.stringify([path, version, session, config]);
}

function digestOf(json: string): Promise<string> {
  let digest = digests.get(json);
  if (!digest) {
    digest = crypto.subtle.digest("SHA-256", new TextEncoder().encode(json))
      .then((d) =>
        Array.from(
          new Uint8Array(d).slice(0, 12),
          (b) => b.toString(16).padStart(2, "0"),
        ).join("")
      );
    digests.set(json, digest);
    if (digests.size > MAX_DIGESTS) {
      digests.delete(digests.keys().next().value!);
    }
  }
  return digest;
}
