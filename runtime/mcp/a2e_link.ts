/**
 * An MCP session's A2E session: the one place the MCP side meets the
 * dispatcher. Each MCP session opens a real host session (counted, subject
 * to `max_sessions`, policy by its token, its own toolkit configurations)
 * and sends A2E requests through the dispatcher exactly as a WebSocket
 * client would, so MCP calls take the same path as A2E calls.
 *
 * ## Pending answers
 *
 * The requests of an MCP session's A2E link that await their answer, by `id`: the
 * host session's outgoing messages are matched here to the request they
 * answer (events on the way, then one final answer), and when the session
 * ends every request still waiting gets an error answer, never silence.
 *
 * @module
 */

import type { OutgoingMessage } from "../capability.ts";
import {
  newId,
  nowSeconds,
  PROTOCOL_VERSION,
} from "../../protocol/envelope.ts";
import { type CallEvent, decodeEvent } from "../../protocol/tool.ts";
import { encodeError } from "../../protocol/responses.ts";
import type { TransportContext } from "../transports/transport_context.ts";
import { Session } from "../session.ts";

/** Options of one request over a link. */
export interface LinkRequestOptions {
  /** Receives the call's events (`tool/event`, `skill/event`) as they happen. */
  onEvent?: (event: CallEvent) => void;
  /** Cancels the request (the sandbox call stops). */
  signal?: AbortSignal;
}

/** A host session driven by an MCP session. */
export interface A2eLink {
  /** How many requests await their answer. */
  readonly inFlight: number;
  /**
   * Sends one A2E request and resolves with its final answer (`*\/resp` or
   * `error`); never rejects for a failed call. The message is made only of
   * what `JSON.parse` makes (parts of an MCP request).
   */
  request(
    message: Record<string, unknown> & { type: string },
    options?: LinkRequestOptions,
  ): Promise<OutgoingMessage>;
  /** Ends the host session, cancelling its calls. Idempotent. */
  close(reason?: string): void;
  /**
   * Receives push messages (no `req_id`), e.g. `tools.changed`: set by the
   * MCP server the link drives.
   */
  onPush?: (message: OutgoingMessage) => void;
}

/** Options of {@link openA2eLink}. */
export interface A2eLinkOptions {
  /**
   * The verified token the MCP client presented ("" when none): the session
   * is admitted with it as with an `Authorization: Bearer` header, so it
   * counts against the token's quotas, and its policy applies.
   */
  token?: string;
}

/**
 * Opens a host session for an MCP session. It is authenticated at once: the
 * MCP transport checked the bearer token (HTTP) or is trusted (stdio).
 *
 * @param context the host as transports see it
 * @param options the token
 * @returns the link, or a sentence saying why the host refused a session
 * @example Ping through a link
 * ```ts
 * import { openA2eLink } from "./a2e_link.ts";
 * import { Dispatcher } from "../dispatcher.ts";
 * import { Session } from "../session.ts";
 * import { defaultConfig } from "../config.ts";
 * import type { OpenSessionOptions } from "../transports/transport_context.ts";
 * import assert from "node:assert/strict";
 * const open = (o: OpenSessionOptions) =>
 *   new Session({ send: o.send, transport: o.transport });
 * const link = openA2eLink({
 *   dispatcher: new Dispatcher(),
 *   limits: defaultConfig().limits,
 *   admitSession: open,
 *   log() {},
 * });
 * if (typeof link === "string") throw new Error(link);
 * assert.equal((await link.request({ type: "ping" })).type, "pong");
 * link.close();
 * ```
 */
export function openA2eLink(
  context: TransportContext,
  options: A2eLinkOptions = {},
): A2eLink | string {
  const pending = new PendingAnswers();
  const token = options.token ?? "";
  const session = context.admitSession({
    transport: "mcp",
    authorization: token === "" ? undefined : `Bearer ${token}`,
    send(message) {
      if (!pending.deliver(message) && message.req_id === undefined) {
        link.onPush?.(message);
      }
    },
    onEnd(reason) {
      // Calls still waiting get an answer, never silence.
      pending.cancelAll(`Cancelled: ${reason}`);
    },
  });
  if (!(session instanceof Session)) return session.reason;
  session.authenticate("accepted", token);
  const link: A2eLink = {
    get inFlight() {
      return pending.size;
    },
    request(message, requestOptions = {}) {
      if (session.closed) {
        return Promise.resolve(
          encodeError("", {
            code: "runtime_error",
            message: "Cannot call: the session has ended",
          }),
        );
      }
      const id = newId();
      const answer = pending.wait(id, requestOptions.onEvent);
      // Made of an MCP request's parts, decoded from JSON.
      context.dispatcher.receiveValue(session, {
        ...message,
        id,
        version: PROTOCOL_VERSION,
        ts: nowSeconds(),
      }, { signal: requestOptions.signal, json: true });
      return answer;
    },
    close(reason = "MCP session ended") {
      session.close(reason);
    },
  };
  return link;
}

interface Waiter {
  resolve: (message: OutgoingMessage) => void;
  onEvent?: (event: CallEvent) => void;
}

/**
 * The table of requests awaiting their answer.
 *
 * @example A request's events, then its answer
 * ```ts
 * import { PendingAnswers } from "./a2e_link.ts";
 * import assert from "node:assert/strict";
 * const pending = new PendingAnswers();
 * const kinds: string[] = [];
 * const answer = pending.wait("r1", (e) => kinds.push(e.kind));
 * const envelope = { id: "x", version: "1", ts: 0, req_id: "r1" };
 * pending.deliver({ ...envelope, type: "tool/event", kind: "progress" });
 * assert.equal(pending.deliver({ ...envelope, type: "tool/call/resp" }), true);
 * assert.equal((await answer).type, "tool/call/resp");
 * assert.deepEqual(kinds, ["progress"]);
 * assert.equal(pending.size, 0);
 * ```
 */
export class PendingAnswers {
  #waiters = new Map<string, Waiter>();

  /** How many requests await their answer. */
  get size(): number {
    return this.#waiters.size;
  }

  /**
   * Registers request `id`.
   *
   * @param id the request's `id` (its answers carry it as `req_id`)
   * @param onEvent receives the request's events until its answer
   * @returns the request's final answer
   */
  wait(
    id: string,
    onEvent?: (event: CallEvent) => void,
  ): Promise<OutgoingMessage> {
    return new Promise<OutgoingMessage>((resolve) => {
      this.#waiters.set(id, { resolve, onEvent });
    });
  }

  /**
   * Hands one outgoing message to the request it answers: an `*\/event` to
   * its `onEvent`, anything else as its final answer.
   *
   * @param message an outgoing message of the host session
   * @returns false when no waiting request has its `req_id`
   */
  deliver(message: OutgoingMessage): boolean {
    const reqId = message.req_id;
    const waiter = typeof reqId === "string"
      ? this.#waiters.get(reqId)
      : undefined;
    if (!waiter) return false;
    if (message.type.endsWith("/event")) {
      waiter.onEvent?.(decodeEvent(message));
      return true;
    }
    this.#waiters.delete(reqId as string);
    waiter.resolve(message);
    return true;
  }

  /**
   * Answers every waiting request with a `runtime_error` and forgets them.
   *
   * @param message the error's message
   */
  cancelAll(message: string): void {
    for (const [id, waiter] of this.#waiters) {
      waiter.resolve(encodeError(id, { code: "runtime_error", message }));
    }
    this.#waiters.clear();
  }
}
