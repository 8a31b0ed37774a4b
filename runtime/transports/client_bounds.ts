/**
 * What a client may cost the host, bounded for every transport (and the
 * MCP endpoint and the console, which face clients too): output waiting for
 * a client that stops reading must not grow host memory without bound, and
 * a huge request body costs no more memory than the limit.
 *
 * @module
 */

// Output waiting for a slow client.

import { getHeapStatistics } from "node:v8";
import type { OutgoingMessage } from "../capability.ts";
import { settlesWithin } from "../deadline.ts";
import { jsonError } from "../doors/guard.ts";
import { SALVAGE_BYTES } from "../../protocol/request_schemas.ts";

/**
 * Past this much waiting output, live events are dropped. They are not lost
 * to the caller: every call also collects its events into its result
 * (bounded), and final answers are always sent.
 */
export const EVENT_BACKLOG_BYTES: number = 8 * 1024 * 1024;

/** Past this much waiting output the client is disconnected. */
export const MAX_BACKLOG_BYTES: number = 64 * 1024 * 1024;

/** What to do with one outgoing message. */
export type BacklogDecision = "send" | "drop" | "disconnect";

/** Options of {@link slowClientRule}. */
export interface SlowClientOptions<M> {
  /** The client as the log names it, e.g. "An SSE client". */
  client: string;
  /**
   * Whether a message is a live event, dropped first. @default an A2E
   * message whose type ends in `/event`
   */
  live?: (message: M) => boolean;
  /**
   * What the log says is dropped. @default "live events (calls still
   * collect them in their results)"
   */
  dropping?: string;
  /**
   * What the log says when the client is given up, e.g. "Ending an SSE
   * session whose client stopped reading".
   */
  stopping: string;
  /** What the output waiting is counted in. @default "bytes" */
  unit?: string;
  /**
   * Whether the connection holds more than its share of what all clients
   * leave unread ({@link UnreadOutput}): it is given up too. @default never
   */
  overShare?: (waiting: number) => boolean;
  /** Where the rule says what it does. */
  log: (message: string) => void;
}

/**
 * One connection's rule for a client that falls behind, the same on every
 * A2E transport: {@link backlogAction} decides by the output waiting, and
 * the log says so once when live events start being dropped and when the
 * client is given up.
 *
 * @param options how the log names the client, and its share of the bound
 * @returns decides what to do with one outgoing message, given the output
 *   already waiting
 * @example A slow client loses live events, never answers
 * ```ts
 * import { EVENT_BACKLOG_BYTES, slowClientRule } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * const lines: string[] = [];
 * const decide = slowClientRule({
 *   client: "A test client",
 *   stopping: "Ending a test session whose client stopped reading",
 *   log: (line) => lines.push(line),
 * });
 * const event = { type: "tool/event", id: "e", version: "1.0", ts: 0 };
 * const answer = { type: "tool/call/resp", id: "r", version: "1.0", ts: 0 };
 * assert.equal(decide(0, event), "send");
 * assert.equal(decide(EVENT_BACKLOG_BYTES + 1, event), "drop");
 * assert.equal(decide(EVENT_BACKLOG_BYTES + 1, event), "drop");
 * assert.equal(decide(EVENT_BACKLOG_BYTES + 1, answer), "send");
 * assert.equal(lines.length, 1); // said once
 * ```
 */
export function slowClientRule<M = OutgoingMessage>(
  options: SlowClientOptions<M>,
): (waiting: number, message: M) => BacklogDecision {
  const live = options.live ??
    ((message: M) => (message as OutgoingMessage).type.endsWith("/event"));
  let dropped = 0;
  return (waiting, message) => {
    const overShare = options.overShare?.(waiting) ?? false;
    const decision = overShare
      ? "disconnect"
      : backlogAction(waiting, live(message));
    if (decision === "drop" && dropped++ === 0) {
      options.log(
        `${options.client} is not keeping up: dropping ${
          options.dropping ??
            "live events (calls still collect them in their results)"
        }`,
      );
    }
    if (decision === "disconnect") {
      options.log(
        `${options.stopping} (${waiting} ${options.unit ?? "bytes"} waiting${
          overShare
            ? ", more than its share of what all clients may leave unread"
            : ""
        })`,
      );
    }
    return decision;
  };
}

/**
 * The same rule for any transport's messages (MCP's notifications are its
 * live events): past {@link EVENT_BACKLOG_BYTES} live messages are dropped,
 * past {@link MAX_BACKLOG_BYTES} the client is disconnected.
 *
 * @param backlogBytes output queued for the client and not yet taken
 * @param live whether the message is a live event (may be dropped)
 * @returns `send`, `drop` or `disconnect`
 * @example An answer is never dropped
 * ```ts
 * import { backlogAction, MAX_BACKLOG_BYTES } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * assert.equal(backlogAction(MAX_BACKLOG_BYTES, false), "send");
 * assert.equal(backlogAction(MAX_BACKLOG_BYTES, true), "drop");
 * assert.equal(backlogAction(MAX_BACKLOG_BYTES + 1, false), "disconnect");
 * ```
 */
export function backlogAction(
  backlogBytes: number,
  live: boolean,
): BacklogDecision {
  if (backlogBytes > MAX_BACKLOG_BYTES) return "disconnect";
  if (backlogBytes > EVENT_BACKLOG_BYTES && live) return "drop";
  return "send";
}

// Request bodies read up to a cap, in bounded time.

/**
 * What the clients of every connection have left unread, bounded together:
 * each connection may leave up to {@link MAX_BACKLOG_BYTES} waiting, and a
 * host admits a thousand sessions, each holding that much (in the server's
 * buffers, outside the V8 heap) until the kernel's out-of-memory killer
 * ends the host. Each connection tells what it has waiting through the
 * function it registers; past `maxBytes` in all, a connection over an
 * equal share is told to disconnect, as one that stopped reading.
 *
 * @example One connection over its share of a small bound
 * ```ts
 * import { UnreadOutput } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * const unread = new UnreadOutput(100);
 * let a = 80, b = 30;
 * unread.watch(() => a);
 * const stop = unread.watch(() => b);
 * assert.equal(unread.overShare(a), true); // 110 in all, 80 > 50
 * assert.equal(unread.overShare(b), false);
 * stop();
 * ```
 */
export class UnreadOutput {
  /** The bound for all connections together, in bytes. */
  readonly maxBytes: number;
  #measures = new Set<() => number>();
  #total = 0;
  #summedAt = -Infinity;

  /**
   * @param maxBytes the bound @default an eighth of the V8 heap limit
   *   (512 MiB under Deno's default 4 GiB): the host's memory as its
   *   operator sized it
   */
  constructor(
    maxBytes: number = Math.floor(getHeapStatistics().heap_size_limit / 8),
  ) {
    this.maxBytes = maxBytes;
  }

  /**
   * Counts one connection's unread output until the returned function is
   * called.
   *
   * @param measure tells the bytes waiting for the client now
   * @returns stops counting it
   */
  watch(measure: () => number): () => void {
    this.#measures.add(measure);
    return () => void this.#measures.delete(measure);
  }

  /**
   * Whether a connection with `bytes` waiting must disconnect: it holds
   * more than an equal share while all together pass the bound. Only a
   * connection over its share sums the others (at most every 100 ms).
   *
   * @param bytes the connection's unread output
   * @returns true to disconnect it
   */
  overShare(bytes: number): boolean {
    if (bytes <= this.maxBytes / Math.max(1, this.#measures.size)) {
      return false;
    }
    const now = performance.now();
    if (now - this.#summedAt > 100) {
      let total = 0;
      for (const measure of this.#measures) total += measure();
      this.#total = total;
      this.#summedAt = now;
    }
    return this.#total > this.maxBytes;
  }
}

/** The process's one {@link UnreadOutput}: every transport's connections. */
export const unreadOutput: UnreadOutput = new UnreadOutput();

/** A body read up to a cap. */
export interface CappedBody {
  /** The text: all of it, or (over the cap) the start, to salvage an id. */
  text: string;
  /** How many bytes the body had, or were read before reading stopped. */
  bytes: number;
  /** Whether it was over the cap. */
  over: boolean;
  /** Present when reading stopped before the body's end, at the cap or past {@link READ_ON_FACTOR} times it. */
  cut?: true;
  /** Present when the body took longer than `timeoutMs`: answer 408. */
  timedOut?: true;
  /**
   * Present when the bodies being read at once hold too much and this one
   * more than its share ({@link MAX_BODIES_BYTES}): answer 503, retry.
   */
  busy?: true;
}

/**
 * What the request bodies being read at once may hold together, in the
 * whole process. Each body is held whole until it has all come (up to
 * `max_message_bytes`), and a client that sends many bodies but their
 * last bytes holds that much per connection, up to the open-file limit:
 * far past the machine's memory. Past this bound, a body holding more than
 * an equal share of it is refused (503, retry later), so small requests
 * still go through.
 */
export const MAX_BODIES_BYTES: number = 256 * 1024 * 1024;

const reading = { bytes: 0, bodies: 0 };

/**
 * Why a body was refused for {@link MAX_BODIES_BYTES}, for the answer.
 *
 * @returns the message
 * @example
 * ```ts
 * import { bodiesBusyMessage } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * assert.match(bodiesBusyMessage(), /retry/);
 * ```
 */
export function bodiesBusyMessage(): string {
  return `Cannot read the request body now: the request bodies being read hold more than ${
    MAX_BODIES_BYTES / 1048576
  } MiB together, this one more than its share; retry in a moment`;
}

// One body's part of what bodies being read hold: taken as it comes,
// given back once it is read (or refused).
class BodyHold {
  #bytes = 0;
  #open = true;

  constructor() {
    reading.bodies++;
  }

  take(bytes: number): boolean {
    if (
      reading.bytes + bytes > MAX_BODIES_BYTES &&
      this.#bytes + bytes > MAX_BODIES_BYTES / reading.bodies
    ) {
      return false;
    }
    this.#bytes += bytes;
    reading.bytes += bytes;
    return true;
  }

  release(): void {
    if (!this.#open) return;
    this.#open = false;
    reading.bytes -= this.#bytes;
    reading.bodies--;
  }
}

/**
 * How far past the cap a body is read (discarding) before reading stops:
 * up to this many times the cap in all. A client that sends a message a
 * little too large reads its answer rather than a reset; one that sends
 * without end is cut.
 */
export const READ_ON_FACTOR = 4;

/**
 * How long a request body may take by default, in ms
 * (`limits.request_body_seconds`): a client that trickles its body, or
 * stops sending it, does not hold the request for ever.
 */
export const BODY_TIMEOUT_MS = 60_000;

/**
 * How long a request body may take, in ms, by the host's limits.
 *
 * @param limits the host's `limits` (`requestBodySeconds`)
 * @returns the bound in ms
 * @example
 * ```ts
 * import { bodyTimeoutMs } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * assert.equal(bodyTimeoutMs({ requestBodySeconds: 2 }), 2000);
 * ```
 */
export function bodyTimeoutMs(
  limits: { requestBodySeconds?: number },
): number {
  // A context built by hand may lack it: the default, never NaN.
  return (limits.requestBodySeconds ?? BODY_TIMEOUT_MS / 1000) * 1000;
}

/**
 * The sentence a 408 answer carries.
 *
 * @param timeoutMs the bound that passed
 * @returns the error message
 * @example
 * ```ts
 * import { bodyTimedOut } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * assert.equal(bodyTimedOut(60_000), "Cannot read the request body: it took longer than 60 s");
 * ```
 */
export function bodyTimedOut(timeoutMs: number): string {
  return `Cannot read the request body: it took longer than ${
    timeoutMs / 1000
  } s`;
}

/**
 * The answer to a body refused for time (408) or for what bodies being
 * read hold together (503, retry in a second), or undefined when it was
 * read: the same for every route that reads a body with {@link readCapped},
 * and a JSON error as the door's refusals are.
 *
 * @param body what {@link readCapped} read
 * @param timeoutMs the bound it was read within, named in the 408
 * @returns the refusal, or undefined
 * @example A body that took too long
 * ```ts
 * import { bodyRefusal } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * const body = { text: "", bytes: 0, over: false, timedOut: true as const };
 * assert.equal(bodyRefusal(body, 1000)?.status, 408);
 * assert.equal(bodyRefusal({ ...body, timedOut: undefined }, 1000), undefined);
 * ```
 */
export function bodyRefusal(
  body: CappedBody,
  timeoutMs: number,
): Response | undefined {
  if (body.timedOut) return jsonError(408, bodyTimedOut(timeoutMs));
  if (body.busy) {
    return jsonError(503, bodiesBusyMessage(), { "Retry-After": "1" });
  }
}

/**
 * A request body that could not be read to its end: the client stopped
 * sending it (closed or half-closed its connection) or sent a malformed
 * one. The client's doing, not a failure of the host's: the host answers
 * 400 and logs nothing (`runtime/host_http.ts`).
 *
 * @example A body whose stream fails
 * ```ts
 * import { BodyReadError, readCapped } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * const body = new ReadableStream<Uint8Array>({
 *   pull: (controller) => controller.error(new Error("connection closed")),
 * });
 * await assert.rejects(readCapped(body, 10), BodyReadError);
 * ```
 */
export class BodyReadError extends Error {
  /** @param cause why the read failed */
  constructor(cause: unknown) {
    super(
      "Cannot read the request body: the client stopped sending it before its end, or sent it malformed",
      { cause },
    );
    this.name = "BodyReadError";
  }
}

/** Options of {@link readCapped}. */
export interface ReadCappedOptions {
  /** Stop reading at the cap rather than read on. @default false */
  stopAtCap?: boolean;
  /** How long the whole body may take, in ms. @default BODY_TIMEOUT_MS */
  timeoutMs?: number;
}

/**
 * Reads a body, keeping at most `max` bytes; on overflow the start is kept
 * to salvage the request's id. By default it reads on past the limit,
 * discarding, up to {@link READ_ON_FACTOR} times it: cutting a slightly
 * large upload short would make many clients report a reset instead of
 * reading the answer, and reading an endless one would never end. With
 * `stopAtCap` it stops at the cap: for a form nobody needs an answer to
 * beyond "too large". However it stops early, the body is cancelled.
 * A body that takes longer than `timeoutMs` is cancelled too.
 *
 * @param body the request's body, or null
 * @param max the cap in bytes
 * @param options `stopAtCap`, `timeoutMs`
 * @returns the text, its size, whether it was over the cap, and whether
 *   reading stopped early (`cut`) or ran out of time (`timedOut`)
 * @example Under and over the cap
 * ```ts
 * import { readCapped } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * const body = (s: string) => new Response(s).body;
 * assert.deepEqual(await readCapped(body("hello"), 10), { text: "hello", bytes: 5, over: false });
 * assert.equal((await readCapped(body("hello"), 4)).over, true);
 * const never = new ReadableStream<Uint8Array>();
 * assert.equal((await readCapped(never, 4, { timeoutMs: 10 })).timedOut, true);
 * ```
 */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  max: number,
  options: ReadCappedOptions = {},
): Promise<CappedBody> {
  if (!body) return { text: "", bytes: 0, over: false };
  const stopAt = options.stopAtCap ? max : max * READ_ON_FACTOR;
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  const hold = new BodyHold();
  let bytes = 0;
  let over = false;
  let timedOut = false;
  // Cancelling ends the pending read: it resolves as done.
  const timer = setTimeout(() => {
    timedOut = true;
    reader.cancel().catch(() => {});
  }, options.timeoutMs ?? BODY_TIMEOUT_MS);
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (bytes <= max) {
        if (!hold.take(value.byteLength)) {
          await reader.cancel().catch(() => {});
          return { text: "", bytes, over: false, busy: true };
        }
        chunks.push(value);
        continue;
      }
      over = true;
      // The start is kept to salvage the id from, also when the first
      // chunk is already over the cap.
      if (chunks.length === 0) chunks.push(value.slice(0, SALVAGE_BYTES));
      // Past the limit, read on but discard, up to where reading stops.
      if (bytes > stopAt) {
        await reader.cancel().catch(() => {});
        return { text: salvage(chunks[0]!), bytes, over, cut: true };
      }
    }
  } catch (error) {
    // A read fails once the body is cancelled or the client went away.
    if (!timedOut) throw new BodyReadError(error);
  } finally {
    clearTimeout(timer);
    hold.release();
  }
  if (timedOut) return { text: "", bytes, over, timedOut: true };
  if (over) return { text: salvage(chunks[0]!), bytes, over };
  // A stream's chunks are typed as maybe shared memory; a body's never are.
  const whole = new Blob(chunks as Uint8Array<ArrayBuffer>[]);
  return { text: await whole.text(), bytes, over: false };
}

// The start of an oversize body, as text, to find the request's id in.
function salvage(first: Uint8Array): string {
  return new TextDecoder().decode(first.subarray(0, SALVAGE_BYTES));
}

/**
 * Reads a request's whole body as text, within `maxBytes` and `timeoutMs`,
 * refusing rather than salvaging: 413 past the cap (a declared length
 * over it unread), 408 past the time, 503 past its share of what bodies
 * being read may hold ({@link MAX_BODIES_BYTES}). A body of declared length within
 * the cap is taken whole (Deno's fast path: about 5 µs a request less
 * than a stream reader; the server holds the client to its length),
 * raced against the clock: past it the answer goes out, and the pending
 * read ends with the connection, holding no more than the client sent.
 *
 * @param request the request
 * @param bounds `maxBytes` and `timeoutMs`
 * @returns the text, or the status to refuse it with
 * @example A declared length over the cap is refused unread
 * ```ts
 * import { readRequestText } from "./client_bounds.ts";
 * import assert from "node:assert/strict";
 * const request = new Request("http://x/", { method: "POST", body: "hello" });
 * const bounds = { maxBytes: 4, timeoutMs: 1000 };
 * assert.deepEqual(await readRequestText(request, bounds), { refused: 413 });
 * ```
 */
export async function readRequestText(
  request: Request,
  bounds: { maxBytes: number; timeoutMs: number },
): Promise<
  { refused?: undefined; text: string } | { refused: 408 | 413 | 503 }
> {
  const declared = request.headers.get("content-length") ?? "";
  // Digits only: Number() reads "" as 0 and "0x10" as 16.
  const length = /^\d+$/.test(declared) ? Number(declared) : NaN;
  if (!Number.isSafeInteger(length)) {
    const body = await readCapped(request.body, bounds.maxBytes, {
      stopAtCap: true,
      timeoutMs: bounds.timeoutMs,
    });
    if (body.timedOut) return { refused: 408 };
    if (body.busy) return { refused: 503 };
    return body.over ? { refused: 413 } : { text: body.text };
  }
  if (length > bounds.maxBytes) {
    await request.body?.cancel().catch(() => {});
    return { refused: 413 };
  }
  // Its declared length is held from the start: Deno reads it whole.
  const hold = new BodyHold();
  if (!hold.take(length)) {
    hold.release();
    await request.body?.cancel().catch(() => {});
    return { refused: 503 };
  }
  const text = request.text();
  try {
    // The client went on too slowly: its read ends with the connection.
    if (!await settlesWithin(text, bounds.timeoutMs)) return { refused: 408 };
    return { text: await text };
  } catch (error) {
    throw new BodyReadError(error);
  } finally {
    // A body answered 408 may still be coming: it is no longer waited for.
    hold.release();
  }
}
