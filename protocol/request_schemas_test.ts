import assert from "node:assert/strict";
import {
  decodeRequest,
  decodeRequestFast,
  parseMessage,
  REQUEST_SCHEMAS,
} from "./request_schemas.ts";
import type { RequestType } from "./requests.ts";
import type { JsonObject } from "./json.ts";
import { camelName, snakeName } from "./wire_names.ts";
import type { z } from "zod";

const TYPES = Object.keys(REQUEST_SCHEMAS) as RequestType[];

// What zod alone makes of a message: the decoded request, or null.
function viaZod(type: RequestType, message: unknown): unknown {
  const parsed = REQUEST_SCHEMAS[type].safeParse(message);
  return parsed.success ? decodeRequest(parsed.data) : null;
}

// The precompiled check against zod on one message given as JSON text:
// when it accepts, zod accepts and decodes to an equal request.
function compare(text: string): "fast" | "zod" {
  const message = JSON.parse(text) as JsonObject;
  const type = message.type as RequestType;
  const fast = decodeRequestFast(type, message);
  const zod = viaZod(type, JSON.parse(text));
  if (fast === undefined) return "zod";
  assert.notEqual(zod, null, `zod rejects what the fast check took: ${text}`);
  assert.deepStrictEqual(fast, zod, text);
  return "fast";
}

// A small seeded generator, so a failure can be replayed.
function rng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

// Values of every JSON kind, including the edge cases each field kind
// checks: empty and odd strings, zero, negatives, huge numbers (1e400 is
// Infinity once parsed), arrays with a non-string, `__proto__` and
// `constructor` keys.
const VALUES = [
  '""',
  '"x"',
  '"é\\u0000"',
  "0",
  "-0",
  "1",
  "-1",
  "0.5",
  "30",
  "1e400",
  "-1e400",
  "true",
  "false",
  "null",
  "[]",
  '["a"]',
  '["a", 1]',
  "[null]",
  "{}",
  '{"a": 1}',
  '{"__proto__": {"polluted": true}, "b": 2}',
  '{"constructor": 1}',
  '{"constructor": {"prototype": null}}',
  '{"provider_name": "openai"}',
  "[[1]]",
];

const FIELD_NAMES = [
  "id",
  "version",
  "ts",
  "agent_id",
  "agent_caps",
  "auth_token",
  "timeout",
  "filter_kind",
  "filter_tags",
  "filter_categories",
  "query",
  "include_deferred",
  "session_id",
  "tool_name",
  "toolkit_name",
  "arguments",
  "config",
  "correlation_id",
  "streaming",
  "name",
  "llm_override",
  "metadata",
  "__proto__",
  "extra",
];

Deno.test("the fast check decodes what zod accepts in the common cases", () => {
  const common = [
    '{"type":"tool/call/req","id":"r1","version":"1.0","ts":1.5,"tool_name":"echo","arguments":{"text":"hi"}}',
    '{"type":"tool/call/req","tool_name":"echo","arguments":{},"streaming":true,"timeout":0.5,"correlation_id":"c","session_id":"s"}',
    '{"type":"ping","id":"p"}',
    '{"type":"handshake/req","id":"h","agent_id":"a","agent_caps":["tools"],"auth_token":null}',
    '{"type":"tool/list/req","query":"csv","filter_tags":["x"],"include_deferred":true}',
    '{"type":"toolkit/configure/req","toolkit_name":"k","config":{"a":1}}',
    '{"type":"skill/call/req","name":"s","arguments":{"q":1},"llm_override":null}',
    '{"type":"shutdown","timeout":0}',
    '{"type":"skill/discover/req","filter_categories":["c"]}',
    '{"type":"toolkit/list/req"}',
    '{"type":"tool/call/req","arguments":{"__proto__":{"x":1},"a":2}}',
  ];
  for (const text of common) assert.equal(compare(text), "fast", text);
});

Deno.test("the fast check leaves to zod what zod must judge", () => {
  const unsure = [
    '{"type":"tool/call/req","tool_name":"echo"}',
    '{"type":"tool/call/req","arguments":[]}',
    '{"type":"tool/call/req","arguments":{},"timeout":0}',
    '{"type":"tool/call/req","arguments":{},"timeout":1e400}',
    '{"type":"tool/call/req","arguments":{},"streaming":"yes"}',
    '{"type":"tool/call/req","id":7,"arguments":{}}',
    '{"type":"ping","ts":"now"}',
    '{"type":"ping","version":1}',
    '{"type":"shutdown","timeout":-1}',
    '{"type":"tool/list/req","filter_tags":["a",1]}',
    '{"type":"handshake/req","auth_token":5}',
    '{"type":"skill/call/req","llm_override":{"provider_name":"openai"}}',
  ];
  for (const text of unsure) assert.equal(compare(text), "zod", text);
});

Deno.test("fuzzed messages: the fast check never accepts what zod rejects, and decodes equally", () => {
  const random = rng(0x5eed);
  const pick = <T>(list: readonly T[]): T =>
    list[Math.floor(random() * list.length)]!;
  let fast = 0;
  let zod = 0;
  for (let i = 0; i < 20_000; i++) {
    const type = pick(TYPES);
    const parts = [`"type":${JSON.stringify(type)}`];
    const fields = Math.floor(random() * 6);
    for (let f = 0; f < fields; f++) {
      parts.push(`${JSON.stringify(pick(FIELD_NAMES))}:${pick(VALUES)}`);
    }
    // Mostly well-formed calls too, so both outcomes are exercised.
    if (type === "tool/call/req" && random() < 0.5) {
      parts.push('"arguments":{"text":"hi"}');
    }
    if (compare(`{${parts.join(",")}}`) === "fast") fast++;
    else zod++;
  }
  // Both paths ran many times: the comparison covered each.
  assert.ok(fast > 2000, `fast path taken ${fast} times`);
  assert.ok(zod > 2000, `zod path taken ${zod} times`);
});

Deno.test("parseMessage answers the same through either path", () => {
  const ok = parseMessage(
    '{"type":"tool/call/req","id":"r","tool_name":"t","arguments":{"a":[1]}}',
  );
  assert.ok(ok.ok);
  assert.deepStrictEqual(ok.request, {
    type: "tool/call/req",
    id: "r",
    sessionId: "",
    toolName: "t",
    arguments: { a: [1] },
    correlationId: "",
    streaming: false,
    timeout: 30,
  });
  const bad = parseMessage(
    '{"type":"tool/call/req","id":"r","tool_name":"t","arguments":{},"timeout":-2}',
  );
  assert.ok(!bad.ok);
  assert.equal(bad.code, "schema_violation");
  assert.match(bad.message, /timeout/);
});

Deno.test("every request field's wire name survives camelCase and back", () => {
  // The names are derived, not listed: a wire name the generic conversion
  // cannot give back (e.g. "a_1") must fail here, not on the wire.
  let count = 0;
  for (const [type, schema] of Object.entries(REQUEST_SCHEMAS)) {
    for (const wire of Object.keys((schema as unknown as z.ZodObject).shape)) {
      assert.equal(snakeName(camelName(wire)), wire, `${type}: ${wire}`);
      count++;
    }
  }
  assert.ok(count > 30, `${count} fields`);
});

Deno.test("parseMessage() names what arrived instead of a JSON object", () => {
  // `typeof null` is "object": "expected a JSON object, got object" says
  // nothing to the client that sent `null`.
  for (
    const [raw, what] of [
      ["null", "null"],
      ["[1]", "an array"],
      ['"ping"', "a string"],
      ["42", "a number"],
      ["true", "a boolean"],
    ]
  ) {
    const r = parseMessage(raw!);
    assert.ok(!r.ok);
    assert.equal(r.code, "invalid_message");
    assert.equal(
      r.message,
      `Cannot accept message: expected a JSON object, got ${what}`,
    );
  }
});
