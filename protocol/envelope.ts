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
 *
 * @example A request and its answer each carry one
 * ```ts
 * import type { Envelope } from "./envelope.ts";
 * import { encodeRequest } from "./requests.ts";
 * import { encodeResponse } from "./responses.ts";
 * import assert from "node:assert/strict";
 * const ping: Envelope = encodeRequest({ type: "ping" });
 * const pong: Envelope = encodeResponse("ping", ping.id, { uptimeSeconds: 1 });
 * assert.equal(pong.type, "pong");
 * assert.equal(pong.version, "1.0");
 * assert.match(pong.id, /^[0-9a-f]{32}$/);
 * assert.notEqual(pong.id, ping.id);
 * assert.ok(pong.ts >= ping.ts);
 * ```
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
  if (idAt === ID_POOL) {
    crypto.getRandomValues(idBytes);
    idAt = 0;
  }
  const at = idAt++ * 16;
  const b = idBytes;
  // Version 4 (random), variant 10xx, as `crypto.randomUUID` makes them.
  return HEX[b[at]!]! + HEX[b[at + 1]!]! + HEX[b[at + 2]!]! +
    HEX[b[at + 3]!]! + HEX[b[at + 4]!]! + HEX[b[at + 5]!]! +
    HEX[(b[at + 6]! & 0x0f) | 0x40]! + HEX[b[at + 7]!]! +
    HEX[(b[at + 8]! & 0x3f) | 0x80]! + HEX[b[at + 9]!]! + HEX[b[at + 10]!]! +
    HEX[b[at + 11]!]! + HEX[b[at + 12]!]! + HEX[b[at + 13]!]! +
    HEX[b[at + 14]!]! + HEX[b[at + 15]!]!;
}

// Every answer carries a fresh id: the CSPRNG is asked for 256 ids' bytes
// at a time (one call instead of one per id), each formatted through a
// table, with no dashes to strip afterwards.
const ID_POOL = 256;
const idBytes = new Uint8Array(ID_POOL * 16);
let idAt = ID_POOL;
const HEX: readonly string[] = Array.from(
  { length: 256 },
  (_, i) => i.toString(16).padStart(2, "0"),
);

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
  // The process's start on the wall clock plus its monotonic clock: never
  // earlier than the last answer's time (Date.now() plus a fraction of
  // performance.now() went back when the fraction wrapped within one
  // millisecond). The Python client wants a float, and JSON cannot tell
  // 1.0 from 1: a whole second gets a microsecond.
  const seconds = (TIME_ORIGIN + performance.now()) / 1000;
  return Number.isInteger(seconds) ? seconds + 1e-6 : seconds;
}

const TIME_ORIGIN = performance.timeOrigin;

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
