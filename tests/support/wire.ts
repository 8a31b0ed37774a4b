/**
 * Conformance assertions written straight from A2E-WIRE.md, deliberately
 * independent of the project's own schemas and builders: they check what a
 * strict client (the pydantic-validating Python SDK) would.
 *
 * @module
 */

import assert from "node:assert/strict";

/** A decoded message. */
export type Msg = Record<string, unknown>;

const CAPS = [
  "skill",
  "tools",
  "toolkits",
  "env",
  "proc",
  "memory",
  "learning",
  "chains",
  "multi_agent",
  "planning",
  "mcp",
  "test",
];
const CODES = [
  "parse_error",
  "runtime_error",
  "invalid_message",
  "version_mismatch",
  "unauthorized",
  "schema_violation",
  "timeout",
  "out_of_memory",
  "sandbox_crash",
  "unknown_tool",
  "tool_denied",
  "tool_error",
  "unknown_skill",
  "skill_error",
  "max_turns_exceeded",
];

/**
 * Asserts the four envelope fields (§1) and the type.
 *
 * @example
 * ```ts ignore
 * assertEnvelope(msg, "pong");
 * ```
 */
export function assertEnvelope(msg: Msg, type: string): void {
  assert.equal(msg.type, type, `expected ${type}, got ${JSON.stringify(msg)}`);
  assert.match(String(msg.id), /^[0-9a-f]{32}$/, "id is a hex uuid4");
  assert.equal(typeof msg.id, "string");
  assert.equal(msg.version, "1.0");
  assert.equal(typeof msg.ts, "number");
  assert.ok((msg.ts as number) > 1_600_000_000, "ts is Unix seconds");
}

/**
 * Asserts a `pong` (§2) answering `reqId`.
 *
 * @example
 * ```ts ignore
 * assertPong(msg, "p1");
 * ```
 */
export function assertPong(msg: Msg, reqId: string): void {
  assertEnvelope(msg, "pong");
  assert.equal(msg.req_id, reqId);
  assert.equal(typeof msg.uptime_seconds, "number");
  assert.ok((msg.uptime_seconds as number) >= 0);
}

/**
 * Asserts a `handshake/resp` (§2) answering `reqId`.
 *
 * @example
 * ```ts ignore
 * assertHandshake(msg, "h1", { ok: true, caps: ["tools"] });
 * ```
 */
export function assertHandshake(
  msg: Msg,
  reqId: string,
  expected: { ok: boolean; caps?: string[] },
): void {
  assertEnvelope(msg, "handshake/resp");
  assert.equal(msg.req_id, reqId);
  assert.match(String(msg.session_id), /^[0-9a-f]{32}$/);
  assert.ok(Array.isArray(msg.accepted_caps));
  for (const cap of msg.accepted_caps as Msg[]) {
    assert.ok(CAPS.includes(String(cap.capability)), `cap ${cap.capability}`);
    assert.equal(cap.enabled, true);
    assert.deepEqual(cap.metadata, {});
  }
  if (expected.caps) {
    assert.deepEqual(
      (msg.accepted_caps as Msg[]).map((c) => c.capability).sort(),
      [...expected.caps].sort(),
    );
  }
  assert.ok(Number.isInteger(msg.max_parallel));
  assert.equal(msg.ok, expected.ok);
  assert.equal(typeof msg.reason, "string");
  if (!expected.ok) assert.notEqual(msg.reason, "");
}

/**
 * Asserts an `error` (§2) with `code` answering `reqId`.
 *
 * @example
 * ```ts ignore
 * assertError(msg, "parse_error", "");
 * ```
 */
export function assertError(
  msg: Msg,
  code: string,
  reqId: string,
  messageMatch?: RegExp,
): void {
  assertEnvelope(msg, "error");
  assert.equal(msg.req_id, reqId);
  assert.ok(CODES.includes(String(msg.code)));
  assert.equal(msg.code, code, `expected ${code}: ${JSON.stringify(msg)}`);
  assert.equal(typeof msg.message, "string");
  assert.notEqual(msg.message, "");
  assert.equal(typeof msg.detail, "object");
  assert.ok(msg.detail !== null && !Array.isArray(msg.detail));
  assert.equal(typeof msg.retryable, "boolean");
  assert.equal(typeof msg.capability_name, "string");
  if (messageMatch) assert.match(String(msg.message), messageMatch);
}

/**
 * Asserts a `tool/event` (§3) answering `reqId`.
 *
 * @example
 * ```ts ignore
 * assertEvent(msg, "tool/event", "c1");
 * ```
 */
export function assertEvent(msg: Msg, type: string, reqId: string): void {
  assertEnvelope(msg, type);
  assert.equal(msg.req_id, reqId);
  assert.equal(typeof msg.kind, "string");
  assert.equal(typeof msg.data, "object");
  assert.ok(Number.isInteger(msg.seq));
}

/**
 * Raw messages for a conformance run, written as a client would send them:
 * the full model with defaults, as in the Python SDK.
 */
export const RAW = {
  handshake: (id: string, fields: Msg = {}): string =>
    JSON.stringify({
      type: "handshake/req",
      id,
      version: "1.0",
      ts: Date.now() / 1000,
      agent_id: "conformance",
      agent_caps: ["streaming", "artifacts"],
      auth_token: "",
      ...fields,
    }),
  ping: (id: string): string =>
    JSON.stringify({ type: "ping", id, version: "1.0", ts: Date.now() / 1000 }),
};

/**
 * Walks the core exchanges every transport must get right: handshake, ping,
 * parse_error with salvaged id, invalid_message, schema_violation naming the
 * field, version_mismatch, and an unserved capability.
 *
 * @example
 * ```ts ignore
 * await coreConformance(send, next);
 * ```
 */
export async function coreConformance(
  send: (raw: string) => Promise<void> | void,
  next: () => Promise<Msg>,
  options: { servesSkills?: boolean } = {},
): Promise<void> {
  await send(RAW.handshake("h1"));
  assertHandshake(await next(), "h1", { ok: true });

  await send(RAW.ping("p1"));
  assertPong(await next(), "p1");

  await send('{"type":"ping","id":"broken1",');
  assertError(await next(), "parse_error", "broken1");

  await send('{"type":"nope/req","id":"u1"}');
  assertError(await next(), "invalid_message", "u1", /nope\/req/);

  await send('{"type":"pong","id":"u2"}');
  assertError(await next(), "invalid_message", "u2");

  await send('{"type":"tool/call/req","id":"s1","arguments":"x"}');
  assertError(await next(), "schema_violation", "s1", /arguments/);

  await send('{"type":"ping","id":"v1","version":"0.9"}');
  assertError(await next(), "version_mismatch", "v1");

  await send('{"type":"skill/discover/req","id":"c1"}');
  if (options.servesSkills) {
    const resp = await next();
    assertEnvelope(resp, "skill/discover/resp");
    assert.equal(resp.req_id, "c1");
    assert.ok(Array.isArray(resp.skills), "skills is a list");
  } else {
    assertError(await next(), "invalid_message", "c1", /"skill" capability/);
  }
}
