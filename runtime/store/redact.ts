/**
 * Redaction before anything about a run is kept or shown: values under
 * secret-looking keys are replaced, every known secret (operator tokens, LLM
 * keys, toolkit secrets) is scrubbed from strings, whole or cut at either
 * end (`scrubText`), long strings are cut and the whole is size-capped.
 *
 * @module
 */

import { readEnv } from "../llm/config.ts";
import {
  allServerSecrets,
  REDACTED,
  scrubKey,
  scrubText,
  type ServerSecretSource,
  usableSecrets,
} from "../toolkits/secrets.ts";

// Keys whose string values are secrets whatever the schema says. Numbers
// stay (`max_tokens`, `input_tokens` are counts, not credentials).
const SECRET_KEY =
  /secret|passw(or)?d|token|api[-_]?key|authori[sz]ation|cookie|credential|private[-_]?key|bearer/i;
const MAX_DEPTH = 32;
const MAX_NODES = 5_000;

/** Options of {@link Redactor.json}. */
export interface RedactOptions {
  /** More secrets to scrub for this value (a toolkit's). @default [] */
  secrets?: readonly string[];
  /**
   * Longest JSON text kept, longer becomes a preview (`json`); longest
   * name kept (`name`). @default 16384 (`json`), 200 (`name`)
   */
  maxChars?: number;
  /** Longest string kept inside the value. @default 2000 */
  maxString?: number;
}

/**
 * Redacts values with a fixed set of operator secrets plus per-call ones.
 *
 * @example Redact by key and by value
 * ```ts
 * import { Redactor } from "./redact.ts";
 * import assert from "node:assert/strict";
 * const redactor = new Redactor(["sk-operator-key"]);
 * const text = redactor.json({ api_key: "abc", note: "uses sk-operator-key", max_tokens: 5 });
 * assert.equal(text, '{"api_key":"[redacted]","note":"uses [redacted]","max_tokens":5}');
 * ```
 */
export class Redactor {
  #secrets: string[];
  #merged = new WeakMap<readonly string[], string[]>();

  /** @param secrets the operator's secrets, scrubbed from everything */
  constructor(secrets: Iterable<string> = []) {
    this.#secrets = usableSecrets(secrets);
  }

  /**
   * Redacts and caps a value as JSON text.
   *
   * @param value any JSON-like value
   * @param options per-call secrets and caps
   * @returns JSON text, at most about `maxChars` long
   */
  json(value: unknown, options: RedactOptions = {}): string {
    const secrets = this.#with(options.secrets);
    const maxChars = options.maxChars ?? 16_384;
    const walker = { nodes: 0, secrets, maxString: options.maxString ?? 2000 };
    let text: string;
    try {
      text = JSON.stringify(clean(value, false, 0, walker)) ?? "null";
    } catch {
      text = JSON.stringify(this.text(String(value), options));
    }
    if (text.length <= maxChars) return text;
    return JSON.stringify({
      truncated: true,
      chars: text.length,
      // Escaping may double the preview: keep the whole within maxChars.
      preview: text.slice(0, Math.floor(maxChars * 0.45)),
    });
  }

  /**
   * Scrubs secrets from a text and caps it.
   *
   * @param text any text (an error message, a summary)
   * @param options per-call secrets and the cap (`maxString`)
   * @returns the text, secrets replaced
   */
  text(text: string, options: RedactOptions = {}): string {
    return cut(
      scrub(text, this.#with(options.secrets)),
      options.maxString ?? 4000,
    );
  }

  /**
   * Scrubs whole secrets from a name (a run's, an event's kind, a file's),
   * then cuts it. A name is written whole, so no piece of a secret is
   * looked for at its ends: that would garble a tool `my_test` beside a
   * token `test-…`.
   *
   * @param name the name as given
   * @param options per-call secrets, and the cap (`maxChars`, @default 200)
   * @returns the name, whole secrets replaced
   * @example A secret in a file's name, and a name ending as a secret begins
   * ```ts
   * import { Redactor } from "./redact.ts";
   * import assert from "node:assert/strict";
   * const redactor = new Redactor(["test-token-5"]);
   * assert.equal(redactor.name("1/test-token-5.txt"), "1/[redacted].txt");
   * assert.equal(redactor.name("my_test"), "my_test");
   * assert.equal(redactor.name("abcdef", { maxChars: 3 }), "abc");
   * ```
   */
  name(name: string, options: RedactOptions = {}): string {
    const secrets = this.#with(options.secrets);
    const scrubbed = secrets.length === 0 ? name : scrubKey(name, secrets);
    return scrubbed.slice(0, options.maxChars ?? 200);
  }

  // The operator's secrets plus a call's. A toolkit's secrets come as one
  // frozen array per configuration, the same for each of its calls and each
  // value of a run: merge them once, not per value (a Set, a filter and a
  // sort each time). Only a frozen array is remembered: one that can still
  // change must not leave a secret out.
  #with(more: readonly string[] | undefined): readonly string[] {
    if (more === undefined || more.length === 0) return this.#secrets;
    let merged = this.#merged.get(more);
    if (merged === undefined) {
      merged = usableSecrets([...this.#secrets, ...more]);
      if (Object.isFrozen(more)) this.#merged.set(more, merged);
    }
    return merged;
  }
}

/**
 * The operator's secrets in a host configuration: auth tokens, string values
 * under secret-looking keys in `llm` and `toolkits`, the environment
 * variables `llm` entries name with `api_key_env`, and the values of the
 * egress secrets bound to hosts (read from their `valueEnv` variables), and
 * the `env` and `headers` values of imported MCP servers.
 *
 * @param config the parts of the host configuration that hold secrets
 * @param env reads an environment variable. @default Deno.env.get, when allowed
 * @returns the secret values
 * @example
 * ```ts
 * import { operatorSecrets } from "./redact.ts";
 * import assert from "node:assert/strict";
 * const found = operatorSecrets({
 *   tokens: ["tok-1"],
 *   llm: [{ provider_credentials: { api_key_env: "K" } }],
 *   toolkits: { gh: { token: "ghp-x", org: "me" } },
 * }, (name) => (name === "K" ? "sk-env" : undefined));
 * assert.deepEqual(found.sort(), ["ghp-x", "sk-env", "tok-1"]);
 * ```
 */
export function operatorSecrets(
  config: {
    tokens: readonly string[];
    llm: unknown;
    toolkits: unknown;
    egress?: { secrets?: readonly { valueEnv: string }[] };
    mcpServers?: Readonly<Record<string, ServerSecretSource>>;
  },
  env: (name: string) => string | undefined = readEnv,
): string[] {
  const out = new Set([
    ...config.tokens,
    ...allServerSecrets(config.mcpServers),
  ]);
  for (const secret of config.egress?.secrets ?? []) {
    const found = env(secret.valueEnv);
    if (found) out.add(found);
  }
  const walk = (node: unknown, secret: boolean, depth: number) => {
    if (depth > MAX_DEPTH) return;
    if (typeof node === "string") {
      if (secret) out.add(node);
      return;
    }
    if (typeof node !== "object" || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (
        /_env$/i.test(key) && SECRET_KEY.test(key) && typeof value === "string"
      ) {
        const found = env(value);
        if (found) out.add(found);
        continue;
      }
      walk(value, secret || SECRET_KEY.test(key), depth + 1);
    }
  };
  walk(config.llm, false, 0);
  walk(config.toolkits, false, 0);
  return [...out];
}

interface Walker {
  nodes: number;
  secrets: readonly string[];
  maxString: number;
}

function clean(
  value: unknown,
  secret: boolean,
  depth: number,
  walker: Walker,
): unknown {
  if (++walker.nodes > MAX_NODES || depth > MAX_DEPTH) return "[…]";
  if (typeof value === "string") {
    return secret
      ? REDACTED
      : cut(scrub(value, walker.secrets), walker.maxString);
  }
  if (typeof value !== "object" || value === null) {
    return typeof value === "bigint" ? String(value) : value;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      if (walker.nodes > MAX_NODES) {
        out.push("[…]");
        break;
      }
      out.push(clean(item, secret, depth + 1, walker));
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (walker.nodes > MAX_NODES) {
      out["…"] = "[…]";
      break;
    }
    // A key is never cut: only whole secrets are scrubbed from it.
    const safeKey = cut(
      walker.secrets.length === 0 ? key : scrubKey(key, walker.secrets),
      200,
    );
    out[safeKey] = clean(
      item,
      secret || SECRET_KEY.test(key),
      depth + 1,
      walker,
    );
  }
  return out;
}

// Without secrets (no operator secret, a call outside a toolkit) a run's
// strings are kept as they are: no call into the scrubber for each.
function scrub(text: string, secrets: readonly string[]): string {
  return secrets.length === 0 ? text : scrubText(text, secrets);
}

function cut(text: string, max: number): string {
  return text.length > max
    ? `${text.slice(0, max)}… (${text.length} chars)`
    : text;
}
