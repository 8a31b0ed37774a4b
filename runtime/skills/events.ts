/**
 * The event log of one skill call: numbers events with a strictly increasing
 * `seq` from 0, sends each one live as a `skill/event` when the call streams,
 * and keeps a bounded copy for `SkillResult.events`.
 *
 * @module
 */

import { envelope } from "../../protocol/envelope.ts";
import type { CallEvent } from "../../protocol/tool.ts";
import type { JsonObject } from "../../protocol/json.ts";
import type { OutgoingMessage } from "../capability.ts";
import { eventSize, RESULT_EVENT_BYTES } from "../tools/call.ts";

/** Options for {@link SkillEventLog}. */
export interface SkillEventLogOptions {
  /** Sends a message live; omitted when the call does not stream. */
  send?: (message: OutgoingMessage) => void;
  /**
   * The most events kept for the result; later ones are still sent live.
   * The terminal `skill.completed`/`skill.failed` is always kept.
   * @default 2000
   */
  maxEvents?: number;
  /** Sees every event as it is emitted (the run observer). */
  onEvent?: (event: CallEvent) => void;
}

/**
 * Collects and relays the events of one skill call.
 *
 * @example Number and collect events
 * ```ts
 * import { SkillEventLog } from "./events.ts";
 * import assert from "node:assert/strict";
 * const sent: unknown[] = [];
 * const log = new SkillEventLog("req1", { send: (m) => sent.push(m), maxEvents: 3 });
 * log.emit("skill.started", { name: "x" });
 * log.emit("status", { message: "a" });
 * log.emit("status", { message: "b" });
 * log.emit("skill.completed", {});
 * assert.deepEqual(log.events.map((e) => e.seq), [0, 1, 3]);
 * assert.equal(log.truncated, true);
 * assert.equal(sent.length, 4);
 * ```
 */
export class SkillEventLog {
  readonly #reqId: string;
  readonly #send?: (message: OutgoingMessage) => void;
  readonly #max: number;
  readonly #onEvent?: (event: CallEvent) => void;
  readonly #events: CallEvent[] = [];
  #seq = 0;
  #keptBytes = 0;
  #truncated = false;
  #closed = false;

  /**
   * @param reqId the request's `id`, echoed as `req_id`
   * @param options live sender and bound
   */
  constructor(reqId: string, options: SkillEventLogOptions = {}) {
    this.#reqId = reqId;
    this.#send = options.send;
    this.#max = Math.max(1, options.maxEvents ?? 2000);
    this.#onEvent = options.onEvent;
  }

  /**
   * Records one event and sends it live. Events after the terminal one are
   * dropped: a late token from an aborted stream must not follow
   * `skill.failed`.
   *
   * @param kind the event kind (`skill.started`, `llm.token`, `progress`, ...)
   * @param data the kind's data
   * @returns the event, or null when the log was already closed
   */
  emit(kind: string, data: JsonObject): CallEvent | null {
    if (this.#closed) return null;
    const terminal = kind === "skill.completed" || kind === "skill.failed";
    if (terminal) this.#closed = true;
    const event: CallEvent = { kind, data, seq: this.#seq++ };
    // Keep one slot for the terminal event so a result always says how it
    // ended, and bound the rest in bytes as well as in number.
    if (terminal) {
      this.#events.push(event);
    } else if (!this.#truncated && this.#events.length < this.#max - 1) {
      this.#keptBytes += eventSize(event);
      if (this.#keptBytes <= RESULT_EVENT_BYTES) this.#events.push(event);
      else this.#truncated = true;
    } else {
      this.#truncated = true;
    }
    this.#onEvent?.(event);
    try {
      this.#send?.(
        envelope("skill/event", { req_id: this.#reqId, ...event }),
      );
    } catch {
      // A session that went away must not fail the skill; its signal ends it.
    }
    return event;
  }

  /** The events kept so far, in order. */
  get events(): CallEvent[] {
    return this.#events;
  }

  /** True when some events were not kept. */
  get truncated(): boolean {
    return this.#truncated;
  }

  /** True once a terminal event was recorded. */
  get closed(): boolean {
    return this.#closed;
  }
}
