/**
 * The operator secrets an imported MCP server's entry holds: the values of
 * a stdio server's `env` and of a URL server's `headers` (and the
 * credential after an `Authorization` scheme such as `Bearer`). They are
 * redacted wherever operator secrets are: what the server says (its stderr
 * tail in the "unavailable" reason, its errors, its tool listings and
 * results, its progress) is scrubbed here before it reaches clients, the
 * console, the log or the run history, and the host's run redactor gets
 * them too (`operatorSecrets`).
 *
 * Values too short or too common to be credentials are left out, since
 * scrubbing them would garble ordinary text: under 4 characters (`1`,
 * `on`, a port digit) and the words `true`, `false`, `null`, `none`,
 * `yes`, `no`, `off`.
 *
 * @module
 */

import { scrubSecrets } from "../toolkits/secrets.ts";

/** Values shorter than this are never treated as secrets. */
export const MIN_SERVER_SECRET = 4;

const COMMON = new Set(["true", "false", "null", "none", "yes", "no", "off"]);

/** What of a server's entry may hold secrets. */
export interface ServerSecretSource {
  /** A stdio server's environment. */
  env?: Readonly<Record<string, string>>;
  /** A URL server's headers. */
  headers?: Readonly<Record<string, string>>;
}

/**
 * The secret values of one server's entry, longest first, frozen.
 *
 * @param spec the entry of `mcp_servers`
 * @returns the values to scrub
 * @example
 * ```ts
 * import { serverSecrets } from "./server_secrets.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   serverSecrets({ headers: { authorization: "Bearer tok-123", "x-debug": "true" } }),
 *   ["Bearer tok-123", "tok-123"],
 * );
 * assert.deepEqual(serverSecrets({ env: { TOKEN: "s3cr3t", LEVEL: "1" } }), ["s3cr3t"]);
 * ```
 */
export function serverSecrets(spec: ServerSecretSource): readonly string[] {
  const out = new Set<string>();
  const add = (value: string) => {
    const v = value.trim();
    if (v.length >= MIN_SERVER_SECRET && !COMMON.has(v.toLowerCase())) {
      out.add(v);
    }
  };
  for (const value of Object.values(spec.env ?? {})) add(value);
  for (const value of Object.values(spec.headers ?? {})) {
    add(value);
    // `Bearer <token>`, `Basic <b64>`: the credential alone may be echoed.
    const space = value.trim().indexOf(" ");
    if (space > 0) add(value.trim().slice(space + 1));
  }
  return Object.freeze([...out].sort((a, b) => b.length - a.length));
}

/**
 * Every server's secrets, for the host's redactor.
 *
 * @param servers `mcp_servers`, by name
 * @returns their secret values
 * @example
 * ```ts
 * import { allServerSecrets } from "./server_secrets.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(allServerSecrets({ a: { env: { K: "abcd" } } }), ["abcd"]);
 * ```
 */
export function allServerSecrets(
  servers: Readonly<Record<string, ServerSecretSource>> | undefined,
): string[] {
  return Object.values(servers ?? {}).flatMap((s) => [...serverSecrets(s)]);
}

/**
 * Scrubs a server's secrets from anything it produced.
 *
 * @param value a reason, an error message, a result, a tool listing
 * @param secrets from {@link serverSecrets}
 * @returns the value, its secrets replaced by `[redacted]`
 * @example
 * ```ts
 * import { scrubServer } from "./server_secrets.ts";
 * import assert from "node:assert/strict";
 * assert.equal(scrubServer("died (stderr: key=abcd)", ["abcd"]), "died (stderr: key=[redacted])");
 * ```
 */
export function scrubServer<T>(value: T, secrets: readonly string[]): T {
  return secrets.length === 0 ? value : scrubSecrets(value, secrets);
}
