/**
 * One A2E session over one WebSocket: sends requests, routes every incoming
 * message by `req_id` to the call waiting for it, and hands the rest to push
 * handlers. Knows nothing about tools or skills.
 *
 * @module
 */

import { SkillboxError, TimeoutError } from "../protocol/errors.ts";
import { type CallEvent, decodeEvent } from "../protocol/tool.ts";
import { decodeError, isEventType } from "../protocol/responses.ts";
import { isPlainObject } from "../protocol/json.ts";
import { printableLine } from "../protocol/lines.ts";
import type {
  Call,
  CloseInfo,
  PushHandler,
  StreamingRequestOptions,
  WireMessage,
} from "./types.ts";
import { EventStream } from "./_event_stream.ts";
import { ConnectionClosedError } from "./errors.ts";

/** What a request needs besides its message. */
export interface SendOptions<T> extends StreamingRequestOptions {
  /** What the call does, for error messages: `Cannot ${label}: ...`. */
  label: string;
  /** The local deadline in ms (already resolved from the defaults). */
  timeout: number;
  /** Ms waited past `timeout` for the host's answer. @default 0 */
  grace?: number;
  /** Turns the final message into the call's answer; throws to fail it. */
  decode: (message: WireMessage) => T;
}

interface Pending {
  label: string;
  events: EventStream<CallEvent>;
  onEvent?: (event: CallEvent) => void;
  settle(outcome: { message: WireMessage } | { error: unknown }): void;
}

// Replies to calls that timed out or were aborted are dropped, not pushed;
// remember that many ids at most so a host that never answers costs nothing.
const ABANDONED_LIMIT = 1024;
// WebSocket.CONNECTING and CLOSING, spelled out so an injected WebSocket
// class works too.
const CONNECTING = 0;
const CLOSING = 2;

/** One socket's A2E traffic: pending calls by id, push handlers, close. */
export class Connection {
  readonly #socket: WebSocket;
  readonly #pending = new Map<string, Pending>();
  readonly #abandoned = new Set<string>();
  readonly #pushHandlers = new Set<PushHandler>();
  #closeInfo: CloseInfo | undefined;
  readonly #closed = deferred<CloseInfo>();
  readonly closed: Promise<CloseInfo> = this.#closed.promise;

  /** @param socket a WebSocket, open or still opening */
  constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.addEventListener("message", (event) => this.#receive(event.data));
    socket.addEventListener("close", (event) => {
      this.#ended({ code: event.code, reason: event.reason });
    });
  }

  // The socket closed, or the host never answered the close: once.
  #ended(info: CloseInfo): void {
    if (this.#closeInfo !== undefined) return;
    this.#closeInfo = info;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const call of pending) {
      call.settle({ error: this.#closedError(call.label) });
    }
    this.#closed.resolve(info);
  }

  /** Sends `message` and returns the call that waits for its answer. */
  request<T>(message: WireMessage, options: SendOptions<T>): Call<T> {
    const id = message.id;
    const events = new EventStream<CallEvent>();
    const { promise, resolve, reject } = deferred<T>();
    // A caller may only iterate events and never await the call: its failure
    // is then seen through the iterator, not as an unhandled rejection.
    promise.catch(() => {});
    const call: Call<T> = Object.assign(promise, { id, events });
    const { signal, timeout, label } = options;
    const wait = timeout + (options.grace ?? 0);

    // Set once the request is sent; settle() may run before that.
    const deadline: { timer?: ReturnType<typeof setTimeout> } = {};
    const onAbort = () => {
      this.#abandon(id);
      settle({ error: signal?.reason });
    };
    const settle: Pending["settle"] = (outcome) => {
      clearTimeout(deadline.timer);
      signal?.removeEventListener("abort", onAbort);
      this.#pending.delete(id);
      if ("message" in outcome) {
        let value: T;
        try {
          value = options.decode(outcome.message);
        } catch (error) {
          events.end({ error });
          reject(error);
          return;
        }
        events.end();
        resolve(value);
      } else {
        events.end({ error: outcome.error });
        reject(outcome.error);
      }
    };

    // A call refused before it is sent puts nothing on the wire.
    try {
      checkTimeout(label, "timeout", timeout);
      signal?.throwIfAborted();
      // Closing counts: a call made after close() must not wait for the event.
      if (this.#closeInfo !== undefined || this.#socket.readyState >= CLOSING) {
        throw this.#closedError(label);
      }
    } catch (error) {
      settle({ error });
      return call;
    }
    this.#pending.set(id, { label, events, onEvent: options.onEvent, settle });
    signal?.addEventListener("abort", onAbort, { once: true });
    deadline.timer = setTimeout(() => {
      this.#abandon(id);
      // The host may just be slow: retryable.
      settle({
        error: new TimeoutError(`Cannot ${label}: timed out after ${wait} ms`, {
          retryable: true,
        }),
      });
    }, Math.min(wait, MAX_TIMER_MS));
    const transmit = () => {
      try {
        this.#socket.send(JSON.stringify(message));
      } catch (cause) {
        settle({
          error: new SkillboxError(
            "runtime_error",
            `Cannot ${label}: send failed`,
            { cause, retryable: true },
          ),
        });
      }
    };
    // The handshake goes out as the socket opens: its deadline and signal
    // cover the opening too, and a socket that closes first settles it with
    // the close's code like any pending call. (connect() closes the socket
    // when the handshake fails, so `open` never comes after that.)
    if (this.#socket.readyState === CONNECTING) {
      this.#socket.addEventListener("open", transmit, { once: true });
    } else {
      transmit();
    }
    return call;
  }

  /** Registers a push handler; returns the function that removes it. */
  onPush(handler: PushHandler): () => void {
    this.#pushHandlers.add(handler);
    return () => this.#pushHandlers.delete(handler);
  }

  /**
   * Closes the socket and waits until it has closed, or `waitMs`: a host
   * that never answers the close handshake (nor drops the connection)
   * would otherwise hold the caller for ever. Past `waitMs` the connection
   * counts as dropped (code 1006).
   */
  close(waitMs: number): Promise<CloseInfo> {
    if (this.#socket.readyState < CLOSING) {
      this.#socket.close(1000, "client closed");
    }
    if (this.#closeInfo !== undefined) {
      return this.closed;
    }
    const timer = setTimeout(() =>
      this.#ended({
        code: 1006,
        reason: `the host did not answer the close within ${waitMs} ms`,
      }), waitMs);
    return this.closed.finally(() => clearTimeout(timer));
  }

  #receive(data: unknown): void {
    // A2E sends one JSON object per text frame; anything else is not ours.
    if (typeof data !== "string") return;
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    if (!isPlainObject(message)) return;
    const msg = message as WireMessage;
    const reqId = typeof msg.req_id === "string" ? msg.req_id : "";
    const pending = reqId === "" ? undefined : this.#pending.get(reqId);
    const isEvent = isEventType(msg.type);
    if (pending === undefined) {
      if (this.#abandoned.has(reqId)) {
        if (!isEvent) this.#abandoned.delete(reqId);
        return;
      }
      this.#push(msg);
      return;
    }
    if (isEvent) {
      const event = decodeEvent(msg);
      pending.events.push(event, data.length);
      try {
        pending.onEvent?.(event);
      } catch (error) {
        this.#abandon(reqId);
        pending.settle({ error });
      }
    } else if (msg.type === "error") {
      pending.settle({ error: decodeError(msg) });
    } else {
      pending.settle({ message: msg });
    }
  }

  #push(message: WireMessage): void {
    for (const handler of [...this.#pushHandlers]) {
      try {
        handler(message);
      } catch (error) {
        // Same contract as an EventTarget listener: one handler's bug is
        // reported as uncaught, and neither other handlers nor routing stop.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  #abandon(id: string): void {
    this.#abandoned.add(id);
    if (this.#abandoned.size > ABANDONED_LIMIT) {
      const oldest = this.#abandoned.values().next().value;
      if (oldest !== undefined) this.#abandoned.delete(oldest);
    }
  }

  // `Cannot <label>: connection closed (code N): reason`, leaving out blanks.
  #closedError(label: string): ConnectionClosedError {
    const info = this.#closeInfo ?? { code: 1000, reason: "client closed" };
    // Some runtimes report 0 when the peer sent no close code: not worth showing.
    const code = info.code >= 1000 ? ` (code ${info.code})` : "";
    const why = info.reason === "" ? "" : `: ${printableLine(info.reason)}`;
    const message = `Cannot ${label}: connection closed${code}${why}`;
    return new ConnectionClosedError(message, info);
  }
}

// The longest delay setTimeout holds: a longer one, like NaN or one below
// 0, fires at once, and every call would time out as it is sent.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Throws unless `ms` is a limit setTimeout can hold.
 *
 * @throws {RangeError} `Cannot <label>: <name> must be 0 to 2147483647 ms: got <ms>`
 */
export function checkTimeout(label: string, name: string, ms: number): void {
  if (ms >= 0 && ms <= MAX_TIMER_MS) return;
  const got = typeof ms === "number" ? ms : typeof ms;
  throw new RangeError(
    `Cannot ${label}: ${name} must be 0 to ${MAX_TIMER_MS} ms: got ${got}`,
  );
}

/**
 * `Promise.withResolvers()`, which older browsers and Node 20 lack.
 */
export function deferred<T>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
} {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
