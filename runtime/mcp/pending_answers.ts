/**
 * The requests of an MCP session's A2E link (`a2e_link.ts`) that await their answer, by `id`: the
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
import type { CallEvent } from "../../protocol/tool.ts";

interface Waiter {
  resolve: (message: OutgoingMessage) => void;
  onEvent?: (event: CallEvent) => void;
}

/**
 * The table of requests awaiting their answer.
 *
 * @example A request's events, then its answer
 * ```ts
 * import { PendingAnswers } from "./pending_answers.ts";
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
      waiter.onEvent?.({
        kind: String(message.kind ?? "status"),
        data: (message.data ?? {}) as Record<string, unknown>,
        seq: Number(message.seq ?? 0),
      });
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
      waiter.resolve(errorAnswer(id, message));
    }
    this.#waiters.clear();
  }
}

/**
 * A `runtime_error` answer to request `reqId`, as the dispatcher would send.
 *
 * @param reqId the request's `id` ("" when it was never sent)
 * @param message what went wrong
 * @returns the error message
 * @example
 * ```ts
 * import { errorAnswer } from "./pending_answers.ts";
 * import assert from "node:assert/strict";
 * assert.equal(errorAnswer("r1", "Cancelled: bye").code, "runtime_error");
 * ```
 */
export function errorAnswer(reqId: string, message: string): OutgoingMessage {
  return {
    type: "error",
    id: newId(),
    version: PROTOCOL_VERSION,
    ts: nowSeconds(),
    req_id: reqId,
    code: "runtime_error",
    message,
  };
}
