/**
 * The A2E envelope: the four fields every message carries.
 *
 * @module
 */

/** The protocol version skillbox speaks; every outgoing message carries it. */
export const PROTOCOL_VERSION = "1.0";

/**
 * The fields every A2E message carries, whatever its type. A type alias, not
 * an interface, so that built messages are assignable to
 * `Record<string, unknown>` (an `OutgoingMessage`).
 */
export type Envelope = {
  /** The message type, e.g. `"tool/call/req"`. */
  type: string;
  /** A fresh uuid4 in hex (32 characters, no dashes). */
  id: string;
  /** Always `"1.0"`. */
  version: string;
  /** Unix time in seconds, as a float. */
  ts: number;
};

/**
 * Returns a fresh uuid4 in hex, the form A2E uses for message and session ids.
 *
 * @returns 32 lowercase hex characters
 * @example Make an id
 * ```ts
 * import { newId } from "./envelope.ts";
 * import assert from "node:assert/strict";
 * assert.match(newId(), /^[0-9a-f]{32}$/);
 * ```
 */
export function newId(): string {
  return crypto.randomUUID().replaceAll("-", "");
}

/**
 * Returns the current Unix time in seconds as a float (A2E's `ts`).
 *
 * @returns seconds since the epoch, with a fractional part
 * @example Read the clock
 * ```ts
 * import { nowSeconds } from "./envelope.ts";
 * import assert from "node:assert/strict";
 * assert.ok(nowSeconds() > 1_700_000_000);
 * ```
 */
export function nowSeconds(): number {
  // Date.now() can land on a whole second; the Python client wants a float
  // either way, and JSON cannot tell 1.0 from 1, so add sub-ms precision.
  return (Date.now() + (performance.now() % 1)) / 1000;
}

/**
 * Wraps the fields of a message in a complete envelope: fresh `id`,
 * `version: "1.0"` and `ts`.
 *
 * @param type the message type
 * @param fields the message's own fields (snake_case, as on the wire)
 * @returns the complete message, ready to serialize
 * @example Build a pong
 * ```ts
 * import { envelope } from "./envelope.ts";
 * import assert from "node:assert/strict";
 * const msg = envelope("pong", { req_id: "ab", uptime_seconds: 1.5 });
 * assert.equal(msg.type, "pong");
 * assert.equal(msg.version, "1.0");
 * assert.equal(msg.req_id, "ab");
 * ```
 */
export function envelope<T extends Record<string, unknown>>(
  type: string,
  fields: T,
): Envelope & T {
  return {
    type,
    id: newId(),
    version: PROTOCOL_VERSION,
    ts: nowSeconds(),
    ...fields,
  };
}
