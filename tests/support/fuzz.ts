/**
 * A deterministic, seeded fuzzer of client messages: A2E requests of every
 * type (`REQUEST_SCHEMAS`) and MCP JSON-RPC requests, each derived from a
 * valid message by mutations a hostile or broken client makes (wrong field
 * types, odd numbers, odd strings, prototype keys, deep nesting, duplicate
 * keys, unknown fields, broken JSON). The same seed and count give the same
 * messages, byte for byte.
 *
 * Each mutant says which answer it must get (the `req_id` or JSON-RPC `id`
 * the host can read off it), so a driver can assert exactly one answer per
 * readable id.
 *
 * @module
 */

import { REQUEST_SCHEMAS } from "../../protocol/request_schemas.ts";
import type { RequestType } from "../../protocol/requests.ts";

/** A small, fast, seeded PRNG (mulberry32). */
export class Rng {
  #state: number;

  /** @param seed any 32-bit integer */
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** One of `items`. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** Keys that name `Object.prototype`'s members. */
export const PROTO_KEYS: readonly string[] = [
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "prototype",
  "__defineGetter__",
];

/** Strings a parser or a renderer may trip on. */
const ODD_STRINGS: readonly string[] = [
  "",
  " ",
  "\uD800",
  "a\uDC00b",
  "nul\u0000byte",
  "\u202Eevil\u202C",
  "line\u2028sep\u2029",
  "🙂".repeat(3),
  "\uFEFFbom",
  "../../etc/passwd",
  "skill://notes/../../etc/passwd",
  "%2e%2e%2f",
  "<script>alert(1)</script>",
  "${x}",
  "x".repeat(70_000),
  ...PROTO_KEYS,
];

/** Numbers at the edges of what a field may mean. */
const ODD_NUMBERS: readonly number[] = [
  0,
  -0.5,
  -1,
  0.0001,
  1.5,
  1e-300,
  2 ** 31,
  2 ** 53 + 2,
  1e21,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER,
];

function nested(depth: number): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { k: value };
  return value;
}

/** A value of a random JSON type, sometimes deep or large. */
function oddValue(rng: Rng): unknown {
  switch (rng.int(9)) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick(ODD_NUMBERS);
    case 3:
    case 4:
      return rng.pick(ODD_STRINGS);
    case 5:
      return rng.pick([[], [1, "a", null], [{}], ["tools"]]);
    case 6:
      return rng.pick([{}, { a: 1 }, protoObject(rng)]);
    case 7:
      return nested(rng.pick([40, 300, 3000]));
    default:
      return rng.pick([0, "", [], {}]);
  }
}

function protoObject(rng: Rng): Record<string, unknown> {
  const key = rng.pick(PROTO_KEYS);
  // JSON.parse makes `__proto__` an own key, as the wire does.
  return JSON.parse(
    `{${JSON.stringify(key)}:{"polluted":"yes"},"x":${rng.int(10)}}`,
  );
}

/** What a driver must see for one mutant. */
export interface Mutant {
  /** The text to send. */
  raw: string;
  /** A2E: the `req_id` its answer carries; `null`: no answer (a valid shutdown). */
  answerId: string | null;
  /** What was done to it, for a failing assertion's message. */
  note: string;
}

/**
 * A valid message of every A2E request type (besides `shutdown`, which ends
 * the session and is fuzzed apart), names taken from the fuzz fixtures.
 */
export function a2eSeeds(): Record<RequestType, Record<string, unknown>> {
  const env = { version: "1.0", ts: 1_700_000_000.5 };
  return {
    "handshake/req": {
      type: "handshake/req",
      ...env,
      agent_id: "fuzz",
      agent_caps: ["tools", "toolkits", "skill"],
      auth_token: "",
    },
    "ping": { type: "ping", ...env },
    "shutdown": { type: "shutdown", ...env, timeout: 5 },
    "tool/list/req": {
      type: "tool/list/req",
      ...env,
      filter_kind: "",
      filter_tags: [],
      query: "",
      include_deferred: false,
    },
    "tool/call/req": {
      type: "tool/call/req",
      ...env,
      session_id: "",
      tool_name: "echo",
      arguments: { text: "hi", count: 2 },
      correlation_id: "c",
      streaming: true,
      timeout: 30,
    },
    "toolkit/list/req": {
      type: "toolkit/list/req",
      ...env,
      filter_kind: "",
      filter_tags: [],
    },
    "toolkit/configure/req": {
      type: "toolkit/configure/req",
      ...env,
      session_id: "",
      toolkit_name: "kit",
      config: { label: "a", limit: 3 },
    },
    "skill/discover/req": {
      type: "skill/discover/req",
      ...env,
      filter_tags: [],
      filter_categories: [],
    },
    "skill/call/req": {
      type: "skill/call/req",
      ...env,
      name: "notes",
      arguments: { topic: "x" },
      correlation_id: "",
      timeout: 5,
      streaming: true,
      llm_override: null,
      metadata: {},
    },
  };
}

const NAME_FIELDS = ["tool_name", "toolkit_name", "name", "query"];
const BAG_FIELDS = ["arguments", "config", "metadata", "llm_override"];

function mutateObject(
  rng: Rng,
  message: Record<string, unknown>,
  notes: string[],
): void {
  const keys = Object.keys(message);
  switch (rng.int(8)) {
    case 0:
    case 1: {
      const key = rng.pick(keys);
      message[key] = oddValue(rng);
      notes.push(`${key}=odd`);
      break;
    }
    case 2: {
      const key = rng.pick(keys.filter((k) => k !== "type" && k !== "id"));
      if (key !== undefined) {
        delete message[key];
        notes.push(`-${key}`);
      }
      break;
    }
    case 3: {
      const key = rng.pick([...PROTO_KEYS, "extra", "x".repeat(300)]);
      Object.defineProperty(message, key, {
        value: oddValue(rng),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      notes.push(`+${key.slice(0, 20)}`);
      break;
    }
    case 4: {
      const key = NAME_FIELDS.find((k) => k in message);
      if (key) {
        message[key] = rng.pick(ODD_STRINGS);
        notes.push(`${key}=name`);
      }
      break;
    }
    case 5: {
      const key = BAG_FIELDS.find((k) => k in message);
      if (key) {
        message[key] = rng.chance(0.5)
          ? protoObject(rng)
          : { text: oddValue(rng), deep: nested(rng.pick([50, 2000])) };
        notes.push(`${key}=bag`);
      }
      break;
    }
    case 6: {
      for (const key of ["timeout", "max_turns", "limit", "cursor"]) {
        if (key in message || rng.chance(0.2)) {
          message[key] = rng.pick(ODD_NUMBERS);
          notes.push(`${key}=num`);
        }
      }
      break;
    }
    default: {
      message.version = rng.pick(["1.0", "0.9", "", 1]);
      notes.push("version");
    }
  }
}

// JSON text with a duplicate of `key` first: JSON.parse keeps the last.
function withDuplicate(raw: string, key: string, value: unknown): string {
  return `{${JSON.stringify(key)}:${JSON.stringify(value)},${raw.slice(1)}`;
}

function readableId(raw: string): string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return /"id"\s*:\s*"([^"\\]{1,128})"/.exec(raw.slice(0, 4096))?.[1] ??
      "";
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "";
  }
  const id = (value as Record<string, unknown>).id;
  return typeof id === "string" ? id : "";
}

function isValidShutdown(raw: string): boolean {
  try {
    const value = JSON.parse(raw);
    return value?.type === "shutdown" &&
      (value.version === undefined || value.version === "1.0" ||
        typeof value.version !== "string") &&
      REQUEST_SCHEMAS.shutdown.safeParse(value).success;
  } catch {
    return false;
  }
}

/**
 * `count` A2E mutants for `seed`, over every request type; `shutdown`
 * mutants are included only when `shutdowns` is true (a valid one ends the
 * session's intake).
 *
 * @param seed the seed
 * @param options how many, and whether shutdowns are fuzzed
 * @returns the mutants, in sending order
 */
export function a2eMutants(
  seed: number,
  options: { count: number; prefix?: string; shutdowns?: boolean },
): Mutant[] {
  const rng = new Rng(seed);
  const seeds = a2eSeeds();
  const types = (Object.keys(seeds) as RequestType[]).filter((t) =>
    options.shutdowns || t !== "shutdown"
  );
  const out: Mutant[] = [];
  for (let n = 0; n < options.count; n++) {
    const type = rng.pick(types);
    const id = `${options.prefix ?? "f"}${seed}-${n}`;
    const message: Record<string, unknown> = structuredClone({
      ...seeds[type],
      id,
    });
    const notes: string[] = [type];
    const rounds = rng.chance(0.15) ? 0 : 1 + rng.int(3);
    for (let r = 0; r < rounds; r++) mutateObject(rng, message, notes);
    let raw = JSON.stringify(message);
    switch (rng.int(15)) {
      case 0:
        raw = withDuplicate(raw, rng.pick(["id", "type", "arguments"]), {
          dup: true,
        });
        notes.push("dup");
        break;
      case 1:
        raw = raw.slice(0, 1 + rng.int(raw.length - 1));
        notes.push("cut");
        break;
      case 2:
        raw = rng.pick(["[]", "null", '"ping"', "42", "[" + raw + "]"]);
        notes.push("not-object");
        break;
      case 3:
        raw = `{"id":${
          JSON.stringify(rng.pick([7, 1.5, null, true, [id], { id }]))
        },${raw.slice(1).replace(/"id":"[^"]*",?/, "")}`;
        notes.push("odd-id");
        break;
      case 4:
        // Over the host's 4 MiB message bound, id first (it is salvaged).
        if (rng.chance(0.25)) {
          raw = `{"id":"${id}",${raw.slice(1, -1)},"pad":"${
            "p".repeat(4.5 * 1024 * 1024)
          }"}`;
          notes.push("huge");
        }
        break;
    }
    out.push({
      raw,
      // Too large to parse: the host salvages the first id.
      answerId: notes.at(-1) === "huge"
        ? id
        : isValidShutdown(raw)
        ? null
        : readableId(raw),
      note: notes.join(" "),
    });
  }
  return out;
}

/** One MCP POST body and the ids of the requests in it that must be answered. */
export interface McpMutant {
  raw: string;
  /** JSON-RPC ids (string or integer) each answered exactly once. */
  ids: (string | number)[];
  /** Whether the body is a JSON-RPC message (or batch) at all. */
  wellFormed: boolean;
  note: string;
}

/** Valid MCP requests and notifications, names from the fuzz fixtures. */
export function mcpSeeds(): Record<string, unknown>[] {
  const request = (method: string, params?: unknown) => ({
    jsonrpc: "2.0",
    id: 0,
    method,
    ...(params === undefined ? {} : { params }),
  });
  return [
    request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "fuzz", version: "1" },
    }),
    request("ping"),
    request("tools/list", {}),
    request("tools/call", { name: "echo", arguments: { text: "hi" } }),
    request("tools/call", {
      name: "echo",
      arguments: { text: "p" },
      _meta: { progressToken: "t" },
    }),
    request("tools/call", {
      name: "configure_toolkit",
      arguments: { toolkit: "kit", config: { label: "b" } },
    }),
    request("tools/call", { name: "search_tools", arguments: { query: "e" } }),
    request("resources/list", {}),
    request("resources/templates/list", {}),
    request("resources/read", { uri: "skill://notes/SKILL.md" }),
    request("resources/directory/read", { uri: "skill://notes" }),
    request("skills/list", {}),
    request("skills/get", { uri: "skill://notes/SKILL.md" }),
    request("prompts/list", {}),
    request("prompts/get", { name: "notes", arguments: {} }),
    request("logging/setLevel", { level: "info" }),
    { jsonrpc: "2.0", method: "notifications/initialized" },
    {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 1 },
    },
  ];
}

function mutateParams(rng: Rng, message: Record<string, unknown>): string {
  const params = (message.params ?? {}) as Record<string, unknown>;
  const keys = Object.keys(params);
  switch (rng.int(7)) {
    case 0:
      message.params = oddValue(rng);
      return "params=odd";
    case 1: {
      const key = keys.length > 0 ? rng.pick(keys) : "x";
      params[key] = oddValue(rng);
      message.params = params;
      return `params.${key}=odd`;
    }
    case 2: {
      if ("name" in params || "uri" in params) {
        const key = "name" in params ? "name" : "uri";
        params[key] = rng.pick(ODD_STRINGS);
        return `params.${key}=name`;
      }
      params.cursor = rng.pick([...ODD_STRINGS, ...ODD_NUMBERS]);
      message.params = params;
      return "params.cursor";
    }
    case 3:
      params.arguments = rng.chance(0.5) ? protoObject(rng) : {
        text: oddValue(rng),
        deep: nested(rng.pick([50, 2000])),
      };
      message.params = params;
      return "params.arguments";
    case 4:
      message.method = rng.pick([
        ...PROTO_KEYS,
        "",
        "tools/nope",
        "notifications/x",
        "resources/subscribe",
        "completion/complete",
        "sampling/createMessage",
      ]);
      return "method";
    case 5:
      message.jsonrpc = rng.pick(["1.0", 2, null]);
      return "jsonrpc";
    default:
      Object.defineProperty(params, rng.pick(PROTO_KEYS), {
        value: oddValue(rng),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      message.params = params;
      return "params.proto";
  }
}

function mcpIdOf(message: unknown): string | number | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const { id, method } = message as Record<string, unknown>;
  if (typeof method !== "string") return undefined;
  if (typeof id === "string") return id;
  if (typeof id === "number" && Number.isInteger(id)) return id;
  return undefined;
}

/**
 * `count` MCP POST bodies for `seed`: single messages and batches, the
 * `initialize` among them (a second one must be refused).
 *
 * @param seed the seed
 * @param options how many
 * @returns the bodies, in sending order
 */
export function mcpMutants(
  seed: number,
  options: { count: number },
): McpMutant[] {
  const rng = new Rng(seed);
  const seeds = mcpSeeds();
  let next = 1000 * (seed % 1000);
  const one = (): { message: Record<string, unknown>; note: string } => {
    const message = structuredClone(rng.pick(seeds));
    const notes = [String(message.method)];
    if ("id" in message) {
      message.id = rng.chance(0.1)
        // Odd, but never an id in flight again: reusing one is the
        // client's fault, which JSON-RPC leaves undefined.
        ? rng.pick([null, 1.5, true, [1], { a: 1 }, -next++, `\uD800${next++}`])
        : rng.chance(0.5)
        ? next++
        : `m${next++}`;
    }
    if (rng.chance(0.8)) notes.push(mutateParams(rng, message));
    return { message, note: notes.join(" ") };
  };
  const out: McpMutant[] = [];
  for (let n = 0; n < options.count; n++) {
    if (rng.chance(0.15)) {
      const batch = Array.from({ length: 1 + rng.int(4) }, one);
      const raw = JSON.stringify(batch.map((b) => b.message));
      out.push({
        raw,
        ids: batch.map((b) => mcpIdOf(b.message)).filter((id) =>
          id !== undefined
        ) as (string | number)[],
        wellFormed: true,
        note: `batch ${batch.map((b) => b.note).join(" | ")}`,
      });
      continue;
    }
    const { message, note } = one();
    let raw = JSON.stringify(message);
    let wellFormed = true;
    if (rng.chance(0.08)) {
      raw = raw.slice(0, 1 + rng.int(raw.length - 1));
      wellFormed = false;
    } else if (rng.chance(0.05)) {
      raw = withDuplicate(raw, "id", "dup");
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      wellFormed = false;
    }
    const id = wellFormed ? mcpIdOf(parsed) : undefined;
    out.push({
      raw,
      ids: id === undefined ? [] : [id],
      wellFormed,
      note,
    });
  }
  return out;
}
