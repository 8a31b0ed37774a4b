/**
 * Secrets in toolkit configurations: fields whose schema says `secret: true`
 * (zod's `.meta({ secret: true })` lands there too). Their values reach only
 * the toolkit's own tools; everything that might show them to a client or a
 * log goes through {@link scrubSecrets} first.
 *
 * @module
 */

import type { JsonSchema } from "../../protocol/json.ts";
import { type SchemaRefs, schemaRefs } from "../schema/validator.ts";
import { indexOfText, prefixTable, replaceAllText } from "../text_search.ts";

/** What replaces a secret wherever it would have been shown. */
export const REDACTED = "[redacted]";

// Secrets shorter than this are not scrubbed from free text: replacing every
// "1" or "on" in a tool's output would garble it and protect nothing.
const MIN_SCRUB_LENGTH = 4;

// Where a subschema applies: to the value itself (null), to the member of
// one key (a tuple's place by its index), or to every member (ANY).
const ANY: unique symbol = Symbol("any member");
type Place = null | string | typeof ANY;

// A schema node's subschemas and where each applies, following the
// keywords the validator applies (see secretValues).
function* subschemas(
  s: Record<string, unknown>,
  refs: SchemaRefs | null,
): Generator<[Place, unknown]> {
  for (const target of refs?.refsOf(s) ?? []) yield [null, target];
  const branches = [s.anyOf, s.oneOf, s.allOf].filter(Array.isArray).flat();
  for (const branch of branches) yield [null, branch];
  // Also the value itself: a secret declared only under a condition.
  for (const key of ["if", "then", "else"]) yield [null, s[key]];
  // A schema that applies to the object itself once a property is there
  // (`dependencies` before draft 2019-09, where a list of names is not
  // a schema).
  for (const key of ["dependentSchemas", "dependencies"]) {
    for (const [, sub] of entries(s[key])) {
      if (!Array.isArray(sub)) yield [null, sub];
    }
  }
  for (const [, sub] of entries(s.patternProperties)) yield [ANY, sub];
  // A tuple's places by index (`prefixItems`, or `items` as a list before
  // draft 2020-12).
  const tuple = [s.prefixItems, s.items, []].find(Array.isArray)!;
  for (const [i, sub] of tuple.entries()) yield [String(i), sub];
  for (const [name, sub] of entries(s.properties)) yield [name, sub];
  for (const key of ANY_MEMBER) {
    if (!Array.isArray(s[key])) yield [ANY, s[key]];
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

// The keywords whose schema the validator applies to members not named
// one by one: a secret under any of them is a secret at any key or index.
const ANY_MEMBER = [
  "additionalProperties",
  "unevaluatedProperties",
  "items", // a schema; a list is a tuple, walked by index above
  "additionalItems",
  "unevaluatedItems",
  "contains",
];

// The entries of a schema keyword that maps names to schemas.
function entries(value: unknown): [string, unknown][] {
  return typeof value === "object" && value !== null
    ? Object.entries(value)
    : [];
}

/**
 * Collects the secret values present in a configuration (strings, and
 * numbers as text), for {@link scrubSecrets}: the values under fields whose
 * schema says `secret: true`, found by following `properties`,
 * `patternProperties`, `additionalProperties`, `unevaluatedProperties`,
 * `items`, `prefixItems`, `additionalItems`, `unevaluatedItems`,
 * `contains`, `anyOf`/`oneOf`/`allOf`, `if`/`then`/`else`,
 * `dependentSchemas`, `dependencies` and `$ref`s (resolved as the
 * validator resolves them, see `schemaRefs`), at any depth of a recursive
 * schema. A configuration too long to walk with its schema (more than
 * 200,000 subschemas applied) has all its values taken as secret.
 *
 * @param schema the toolkit's configuration schema
 * @param config a configuration
 * @returns the distinct secret values, longest first
 * @example
 * ```ts
 * import { secretValues } from "./secrets.ts";
 * import assert from "node:assert/strict";
 * const schema = { type: "object", properties: { token: { type: "string", secret: true } } };
 * assert.deepEqual(secretValues(schema, { token: "ghp_x" }), ["ghp_x"]);
 * ```
 */
export function secretValues(
  schema: JsonSchema,
  config: Record<string, unknown>,
): string[] {
  // References are followed where the validator follows them: a secret
  // behind one it resolves and this walk did not (an escaped name, an
  // anchor) would be checked and kept, but never redacted.
  const refs = schemaRefs(schema);
  // The configuration is walked with its schema, not by a list of paths: a
  // recursive schema has no end of paths, and a field name may hold a dot.
  // Each schema node is applied once to each value, so the walk ends.
  const applied = new Map<unknown, Set<object>>();
  const secret: unknown[] = [];
  const todo: [unknown, unknown][] = [[refs?.root ?? schema, config]];
  let steps = 0;
  while (todo.length > 0) {
    const [node, value] = todo.pop()!;
    if (!isObject(node)) continue;
    const nodes = applied.get(value) ?? new Set();
    if (nodes.has(node)) continue;
    applied.set(value, nodes.add(node));
    if (++steps > MAX_CONFIG_STEPS) {
      // Too long to tell which fields are secret: all of them are.
      secret.push(config);
      break;
    }
    if (node.secret === true) {
      secret.push(value);
      continue;
    }
    for (const [place, sub] of subschemas(node, refs)) {
      if (!isObject(sub)) continue;
      if (place === null) todo.push([sub, value]);
      else if (isObject(value)) {
        const keys = place === ANY ? Object.keys(value) : [place];
        for (const key of keys) {
          if (Object.hasOwn(value, key)) todo.push([sub, value[key]]);
        }
      }
    }
  }
  const values = new Set<string>();
  while (secret.length > 0) {
    const value = secret.pop();
    if (typeof value === "string" || typeof value === "number") {
      values.add(String(value));
    } else if (isObject(value)) {
      for (const member of Object.values(value)) secret.push(member);
    }
  }
  return [...values].filter((v) => v.length > 0).sort((a, b) =>
    b.length - a.length
  );
}

// How many (schema node, value) pairs secretValues() applies at most: as
// many validation steps as the validator takes (its MAX_SCHEMA_STEPS).
const MAX_CONFIG_STEPS = 200_000;

/**
 * Replaces the secrets in one text with {@link REDACTED}: every whole
 * occurrence, and a cut one at either end. Text is cut in places the host
 * does not see (a tool's own cap, the sandbox's result bound, a broker's
 * body bound), and a cut through a secret leaves its start at the end of a
 * string (or its end at the start, when a tail is kept), which is not the
 * whole secret. So a string that ends with at least 4 of a secret's first
 * characters, or starts with at least 4 of its last ones, loses them, and
 * a string of 4 characters or more that is all a piece of a secret is
 * replaced. A string that merely ends that way loses them too: the price of
 * never showing a cut secret. An object key is never cut, so it is scrubbed
 * of whole secrets only (`ends: false`). A secret shorter than 4 characters
 * is not scrubbed.
 *
 * @param text any text
 * @param secrets the values to scrub
 * @param options `ends: false` scrubs whole secrets only. @default { ends: true }
 * @returns the text, secrets replaced (the same string when none occurs)
 * @example A whole secret, and one cut at the end
 * ```ts
 * import { scrubText } from "./secrets.ts";
 * import assert from "node:assert/strict";
 * assert.equal(scrubText("key ghp_abc123 ok", ["ghp_abc123"]), "key [redacted] ok");
 * assert.equal(scrubText("body: ghp_ab", ["ghp_abc123"]), "body: [redacted]");
 * assert.equal(scrubText("c123 and more", ["ghp_abc123"]), "[redacted] and more");
 * assert.equal(scrubText("ends in gh", ["ghp_abc123"]), "ends in gh");
 * ```
 */
export function scrubText(
  text: string,
  secrets: readonly string[],
  options?: { ends?: boolean },
): string {
  secrets = longestFirst(secrets);
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= MIN_SCRUB_LENGTH) {
      out = replaceAllText(out, secret, REDACTED);
    }
  }
  if (out.length < MIN_SCRUB_LENGTH || options?.ends === false) return out;
  let start = 0;
  let end = 0;
  for (const secret of secrets) {
    if (secret.length < MIN_SCRUB_LENGTH) continue;
    // Cut at both ends: all that is left is a piece of the secret.
    if (out.length <= secret.length && indexOfText(secret, out) >= 0) {
      return REDACTED;
    }
    // A cut piece is shorter than the secret, and no longer than the text.
    const most = Math.min(out.length, secret.length - 1);
    start = Math.max(start, overlap(secret, out, most));
    end = Math.max(end, overlap(out, secret, most));
  }
  if (start === 0 && end === 0) return out;
  if (start + end >= out.length) return REDACTED;
  return (start > 0 ? REDACTED : "") + out.slice(start, out.length - end) +
    (end > 0 ? REDACTED : "");
}

// How many characters at the end of `head` are the start of `tail`: at
// most `max`, at least MIN_SCRUB_LENGTH, else 0. A secret cut short at the
// end of a text is (text, secret); at its start, (secret, text). Each
// place in the last `max` characters is tried in turn (the leftmost that
// matches to the end is the longest), which costs about one comparison a
// place in usual text. Tries that run long before failing mean a text of
// repeats, where that costs up to `max` comparisons a place (a session's
// megabyte secret of one letter: hours on the host's thread): past a
// budget, one pass of Knuth-Morris-Pratt answers instead.
function overlap(head: string, tail: string, max: number): number {
  const m = Math.min(max, head.length, tail.length);
  const first = tail.charCodeAt(0);
  const last = head.length - MIN_SCRUB_LENGTH;
  let budget = 4 * m;
  for (let at = head.length - m; at <= last; at++) {
    if (head.charCodeAt(at) !== first) continue;
    let n = 1;
    while (
      at + n < head.length && head.charCodeAt(at + n) === tail.charCodeAt(n)
    ) n++;
    if (at + n === head.length) return n;
    budget -= n;
    if (budget < 0) return overlapInOnePass(head, tail, m);
  }
  return 0;
}

// overlap() in one pass over the last `m` characters of `head`.
function overlapInOnePass(head: string, tail: string, m: number): number {
  const border = prefixTable(tail, m);
  // `n` characters of `tail` matched so far; the text is `m` long, so it
  // never passes `m` before the end.
  let n = 0;
  for (let at = head.length - m; at < head.length; at++) {
    const c = head.charCodeAt(at);
    while (n > 0 && tail.charCodeAt(n) !== c) n = border[n - 1]!;
    if (tail.charCodeAt(n) === c) n++;
  }
  return n >= MIN_SCRUB_LENGTH ? n : 0;
}

// Longest first, so that a secret inside another is never replaced before
// it (which would leave the rest of the longer one showing). Lists are
// usually in that order already: then the list itself, not a copy.
function longestFirst(secrets: readonly string[]): readonly string[] {
  for (let i = 1; i < secrets.length; i++) {
    if (secrets[i]!.length > secrets[i - 1]!.length) {
      return [...secrets].sort((a, b) => b.length - a.length);
    }
  }
  return secrets;
}

// Keys are never cut: only whole secrets are scrubbed from them.
const KEYS = Object.freeze({ ends: false });

/**
 * Scrubs an object key: whole secrets only, since a key is never cut.
 *
 * @param key an object key
 * @param secrets the values to scrub
 * @returns the key, whole secrets replaced with {@link REDACTED}
 * @example
 * ```ts
 * import { scrubKey } from "./secrets.ts";
 * import assert from "node:assert/strict";
 * assert.equal(scrubKey("ghp_abc123", ["ghp_abc123"]), "[redacted]");
 * assert.equal(scrubKey("ghp_ab", ["ghp_abc123"]), "ghp_ab");
 * ```
 */
export function scrubKey(key: string, secrets: readonly string[]): string {
  return scrubText(key, secrets, KEYS);
}

/**
 * The secrets worth scrubbing from a list: each once, none shorter than
 * the shortest that is scrubbed, longest first (so that a secret inside
 * another is never replaced before it).
 *
 * @param secrets any secret values
 * @returns a new list, ready for {@link scrubText}
 * @example
 * ```ts
 * import { usableSecrets } from "./secrets.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(usableSecrets(["abcd", "on", "abcdef", "abcd"]), ["abcdef", "abcd"]);
 * ```
 */
export function usableSecrets(secrets: Iterable<string>): string[] {
  return [...new Set(secrets)].filter((s) => s.length >= MIN_SCRUB_LENGTH)
    .sort((a, b) => b.length - a.length);
}

/**
 * Replaces every occurrence of the given secrets in a value (strings found
 * anywhere in it, object keys included) with {@link REDACTED}, as
 * {@link scrubText} does. Used on tool results, events and error messages
 * before they leave the host. Past 64 levels of nesting, a part in which a
 * secret shows is replaced whole.
 *
 * @param value any JSON-like value
 * @param secrets values from {@link secretValues}
 * @returns the value itself when no secret occurs in it, else a scrubbed copy
 * @example
 * ```ts
 * import { scrubSecrets } from "./secrets.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   scrubSecrets({ msg: "auth ghp_abc failed", n: 1 }, ["ghp_abc"]),
 *   { msg: "auth [redacted] failed", n: 1 },
 * );
 * ```
 */
export function scrubSecrets<T>(value: T, secrets: readonly string[]): T {
  const usable = usableSecrets(secrets);
  if (usable.length === 0) return value;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return scrubText(v, usable);
    if (typeof v !== "object" || v === null) return v;
    // Deeper than a call stack is safe for: the subtree is kept whole or,
    // if a secret shows anywhere in it, replaced whole.
    if (depth > 64) return showsSecret(v, usable) ? REDACTED : v;
    if (Array.isArray(v)) {
      let changed = false;
      const out = v.map((item) => {
        const next = walk(item, depth + 1);
        if (next !== item) changed = true;
        return next;
      });
      return changed ? out : v;
    }
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) {
      const key = scrubKey(k, usable);
      const next = walk(item, depth + 1);
      if (next !== item || key !== k) changed = true;
      out[key] = next;
    }
    return changed ? out : v;
  };
  return walk(value, 0) as T;
}

// Whether scrubText() would change any string or key in a value, walked
// without recursion (a value from JSON may nest thousands of levels).
function showsSecret(value: object, secrets: readonly string[]): boolean {
  const todo: unknown[] = [value];
  const seen = new Set<object>(); // a value built in the host may be cyclic
  while (todo.length > 0) {
    const v = todo.pop();
    if (typeof v === "string") {
      if (scrubText(v, secrets) !== v) return true;
    } else if (isObject(v) && !seen.has(v)) {
      seen.add(v);
      for (const [key, item] of Object.entries(v)) {
        if (scrubKey(key, secrets) !== key) return true;
        todo.push(item);
      }
    }
  }
  return false;
}

/**
 * Returns a copy of a configuration schema fit to send to clients: every
 * secret field keeps its type and description but loses `default`,
 * `examples`, `const` and `enum`, which could hold a real secret.
 *
 * @param schema the toolkit's configuration schema
 * @returns a deep copy
 * @example
 * ```ts
 * import { publicSchema } from "./secrets.ts";
 * import assert from "node:assert/strict";
 * const s = publicSchema({ type: "object", properties: { t: { type: "string", secret: true, default: "abc" } } });
 * assert.deepEqual(s, { type: "object", properties: { t: { type: "string", secret: true } } });
 * ```
 */
export function publicSchema(schema: JsonSchema): JsonSchema {
  // Without recursion, and to any depth: a module's schema may nest
  // thousands of levels, and a secret's default down there is one still.
  const copies = new Map<object, Record<string, unknown>>();
  const copyOf = (node: unknown): unknown => {
    if (!isObject(node)) return node;
    let copy = copies.get(node);
    if (copy === undefined) {
      copy = (Array.isArray(node) ? [] : {}) as Record<string, unknown>;
      copies.set(node, copy);
      todo.push([node, copy]);
    }
    return copy;
  };
  const todo: [Record<string, unknown>, Record<string, unknown>][] = [];
  const out = copyOf(schema) as JsonSchema;
  while (todo.length > 0) {
    const [node, copy] = todo.pop()!;
    const secret = !Array.isArray(node) && node.secret === true;
    for (const [k, v] of Object.entries(node)) {
      if (secret && HIDDEN.has(k)) continue;
      // Defined, not assigned: a key "__proto__" stays a key.
      Object.defineProperty(copy, k, {
        value: copyOf(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return out;
}

// What a secret field's schema loses before a client sees it.
const HIDDEN = new Set(["default", "examples", "const", "enum"]);

// An imported MCP server is a toolkit too: its entry's `env` and `headers`
// values, its URL's userinfo and query values, and its secret-named args
// are its secrets, scrubbed from all it produces and from history.

const COMMON = new Set(["true", "false", "null", "none", "yes", "no", "off"]);

/** What of a server's entry may hold secrets. */
export interface ServerSecretSource {
  /** A stdio server's environment. */
  env?: Readonly<Record<string, string>>;
  /** A URL server's headers. */
  headers?: Readonly<Record<string, string>>;
  /** A URL server's URL: its userinfo and query values. */
  url?: string;
  /** A stdio server's arguments: the values of secret-named ones. */
  args?: readonly string[];
}

// An argument (`--api-key`, `API_TOKEN=`) whose name says its value is a
// credential; paths, package names and the like stay readable.
const SECRET_NAME = /key|token|secret|password|passwd|auth|credential/i;

/**
 * The secret values of one server's entry, longest first, frozen: the
 * values of its `env` and `headers` (and the credential after a scheme
 * such as `Bearer`), its URL's user name and password and every query
 * value, and, of its `args`, the value of a flag whose name holds `key`,
 * `token`, `secret`, `password`, `passwd`, `auth` or `credential`
 * (`--api-key X`, `--api-key=X`) and of a `NAME=value` argument whose name
 * does, and the credentials of a URL or such a header
 * (`Authorization: Bearer X`) in an argument. Values under 4 characters and
 * words such as `true` are left out.
 *
 * @param spec the entry of `mcp_servers`
 * @returns the values to scrub
 * @example
 * ```ts
 * import { serverSecrets } from "./secrets.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   serverSecrets({ headers: { authorization: "Bearer tok-123", "x-debug": "true" } }),
 *   ["Bearer tok-123", "tok-123"],
 * );
 * assert.deepEqual(serverSecrets({ env: { TOKEN: "s3cr3t", LEVEL: "1" } }), ["s3cr3t"]);
 * ```
 * @example The URL's credentials, and secret args
 * ```ts
 * import { serverSecrets } from "./secrets.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   serverSecrets({ url: "https://ops-user:pw-12345@mcp.example/mcp?key=k-5678&v=2" }),
 *   [
 *     "Basic b3BzLXVzZXI6cHctMTIzNDU=", // what the host sends for them
 *     "b3BzLXVzZXI6cHctMTIzNDU=",
 *     "ops-user",
 *     "pw-12345",
 *     "k-5678",
 *   ],
 * );
 * assert.deepEqual(
 *   serverSecrets({ args: ["/srv/index.js", "--api-key", "sk-1234", "API_TOKEN=t-9876"] }),
 *   ["sk-1234", "t-9876"],
 * );
 * ```
 */
export function serverSecrets(spec: ServerSecretSource): readonly string[] {
  const out = new Set<string>();
  const add = (value: string) => {
    const v = value.trim();
    if (v.length >= MIN_SCRUB_LENGTH && !COMMON.has(v.toLowerCase())) {
      out.add(v);
    }
  };
  for (const value of Object.values(spec.env ?? {})) add(value);
  for (const value of Object.values(spec.headers ?? {})) {
    headerSecrets(value, add);
  }
  if (spec.url !== undefined) urlSecrets(spec.url, add);
  if (spec.args !== undefined) argSecrets(spec.args, add);
  return Object.freeze([...out].sort((a, b) => b.length - a.length));
}

// A header's value, and the credential after its scheme (`Bearer <token>`,
// `Basic <b64>`): the credential alone may be echoed.
function headerSecrets(value: string, add: (value: string) => void): void {
  const v = value.trim();
  add(v);
  const space = v.indexOf(" ");
  if (space > 0) add(v.slice(space + 1));
}

// A URL's user name and password, and its query values, as written and
// decoded (an error may quote either).
function urlSecrets(text: string, add: (value: string) => void): void {
  const url = URL.parse(text);
  if (url === null) return;
  const both = (raw: string) => {
    add(raw);
    add(decoded(raw));
  };
  both(url.username);
  both(url.password);
  const basic = basicAuthOf(url);
  if (basic !== null) {
    add(basic);
    add(basic.slice("Basic ".length));
  }
  for (const pair of url.search.slice(1).split("&")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    both(pair.slice(eq + 1));
    both(pair.slice(eq + 1).replaceAll("+", " "));
  }
}

/**
 * The `Authorization` value for a URL's user name and password: fetch
 * refuses a URL with credentials, so a URL server's are sent this way
 * (RFC 7617, UTF-8).
 *
 * @param url the server's URL
 * @returns `Basic <base64 of user:password>`, or null without credentials
 * @example
 * ```ts
 * import { basicAuthOf } from "./secrets.ts";
 * import assert from "node:assert/strict";
 * assert.equal(basicAuthOf(new URL("https://ops:pw%40x@h/mcp")), "Basic b3BzOnB3QHg=");
 * assert.equal(basicAuthOf(new URL("https://h/mcp")), null);
 * ```
 */
export function basicAuthOf(url: URL): string | null {
  if (url.username === "" && url.password === "") return null;
  const bytes = new TextEncoder().encode(
    `${decoded(url.username)}:${decoded(url.password)}`,
  );
  return `Basic ${bytes.toBase64()}`;
}

// A percent-encoded part decoded; a malformed escape: the part as written.
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

// A URL anywhere in an argument (`https://u:pw@host/mcp?key=X`, also
// after `--url=`), and a header (`Authorization: Bearer X`).
const URL_IN_ARG = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;
const HEADER_ARG = /^([A-Za-z0-9_-]+):\s*(\S.*)$/;

// `--api-key X`, `--api-key=X`, `API_KEY=X`: the value of an argument
// whose name says it is a credential. A flag followed by another flag
// takes no value. A bridge such as `mcp-remote` takes the remote server's
// URL and headers as arguments: their credentials too.
function argSecrets(
  args: readonly string[],
  add: (value: string) => void,
): void {
  let flag = false;
  for (const arg of args) {
    const eq = arg.indexOf("=");
    if (flag && !arg.startsWith("-")) add(arg);
    else if (eq > 0 && SECRET_NAME.test(arg.slice(0, eq))) {
      add(arg.slice(eq + 1));
    }
    flag = eq < 0 && arg.startsWith("-") && SECRET_NAME.test(arg);
    for (const [url] of arg.matchAll(URL_IN_ARG)) urlSecrets(url, add);
    const [, name = "", value = ""] = HEADER_ARG.exec(arg) ?? [];
    if (SECRET_NAME.test(name)) headerSecrets(value, add);
  }
}

/**
 * Every server's secrets, for the host's redactor.
 *
 * @param servers `mcp_servers`, by name
 * @returns their secret values
 * @example
 * ```ts
 * import { allServerSecrets } from "./secrets.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(allServerSecrets({ a: { env: { K: "abcd" } } }), ["abcd"]);
 * ```
 */
export function allServerSecrets(
  servers: Readonly<Record<string, ServerSecretSource>> | undefined,
): string[] {
  return Object.values(servers ?? {}).flatMap((s) => [...serverSecrets(s)]);
}
