/**
 * A running call's events as MCP notifications: `progress` as
 * `notifications/progress` (when the request carried a `progressToken`),
 * `log` and `status` as `notifications/message` at the matching level, a
 * skill's `llm.token` text as progress messages, coalesced (sent within
 * `coalesceMs`, never held until the end), and the other skill events
 * (`tool.started`, ...) as debug messages.
 *
 * @module
 */

import type {
  LoggingLevel,
  ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import type { CallEvent } from "../../protocol/tool.ts";

/** Options of {@link createEventRelay}. */
export interface EventRelayOptions {
  /** The request's `_meta.progressToken`, if any. */
  progressToken?: string | number;
  /** Sends one notification related to the request. */
  send: (notification: ServerNotification) => Promise<void>;
  /** The `logger` name of log messages (the tool or skill). */
  logger: string;
  /** How long token text may wait to be joined with more. @default 25 */
  coalesceMs?: number;
}

/** Turns events into notifications. */
export interface EventRelay {
  /** Relays one event. */
  onEvent(event: CallEvent): void;
  /** Sends buffered token text now; call before sending the result. */
  flush(): Promise<void>;
}

const LEVELS: Record<string, LoggingLevel> = {
  trace: "debug",
  debug: "debug",
  info: "info",
  notice: "notice",
  warn: "warning",
  warning: "warning",
  error: "error",
  critical: "critical",
  alert: "alert",
  emergency: "emergency",
};

/**
 * Creates a relay for one call.
 *
 * @param options the progress token, the sender and the logger name
 * @returns the relay
 * @example Progress becomes a progress notification
 * ```ts
 * import { createEventRelay } from "./notifications.ts";
 * import assert from "node:assert/strict";
 * const sent: unknown[] = [];
 * const relay = createEventRelay({ progressToken: 7, logger: "t",
 *   send: (n) => { sent.push(n); return Promise.resolve(); } });
 * relay.onEvent({ kind: "progress", data: { pct: 50, message: "half" }, seq: 0 });
 * await relay.flush();
 * assert.deepEqual(sent, [{ method: "notifications/progress",
 *   params: { progressToken: 7, progress: 50, total: 100, message: "half" } }]);
 * ```
 */
export function createEventRelay(options: EventRelayOptions): EventRelay {
  return new Relay(options);
}

// One call's relay; `onEvent` is handed out unbound, hence an arrow field.
class Relay implements EventRelay {
  #options: EventRelayOptions;
  #token: string | number | undefined;
  #coalesceMs: number;
  #sending: Promise<void> = Promise.resolve();
  // MCP asks that progress increase with every notification.
  #last = 0;
  #tokens = "";
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: EventRelayOptions) {
    this.#options = options;
    this.#token = options.progressToken;
    this.#coalesceMs = options.coalesceMs ?? 25;
  }

  readonly onEvent = (event: CallEvent): void => {
    const data = event.data;
    switch (event.kind) {
      case "progress": {
        this.#flushTokens();
        const pct = Number(data.pct);
        this.#progress(
          Number.isFinite(pct) ? pct : null,
          String(data.message ?? ""),
        );
        return;
      }
      case "status":
        this.#flushTokens();
        this.#log("info", String(data.message ?? ""));
        return;
      case "log":
        this.#flushTokens();
        this.#log(
          LEVELS[String(data.level ?? "info").toLowerCase()] ?? "info",
          String(data.message ?? ""),
        );
        return;
      case "llm.token":
        if (this.#token === undefined) return;
        this.#tokens += String(data.text ?? "");
        this.#timer ??= setTimeout(this.#flushTokens, this.#coalesceMs);
        return;
      case "artifact":
        return; // Artifacts arrive whole in the result.
      default:
        this.#flushTokens();
        this.#log("debug", { kind: event.kind, ...data });
    }
  };

  flush(): Promise<void> {
    this.#flushTokens();
    return this.#sending;
  }

  #send(notification: ServerNotification): void {
    // In order, and a client gone mid-call must not fail the call.
    this.#sending = this.#sending.then(() => this.#options.send(notification))
      .catch(() => {});
  }

  #progress(value: number | null, message: string): void {
    const token = this.#token;
    if (token === undefined) return;
    const next = value !== null && value > this.#last
      ? value
      : this.#last + 0.001;
    this.#last = next;
    this.#send({
      method: "notifications/progress",
      params: {
        progressToken: token,
        progress: next,
        ...(value !== null ? { total: 100 } : {}),
        ...(message ? { message } : {}),
      },
    });
  }

  #log(level: LoggingLevel, data: unknown): void {
    this.#send({
      method: "notifications/message",
      params: { level, logger: this.#options.logger, data },
    });
  }

  // An arrow field: it is the coalescing timer's callback.
  #flushTokens = (): void => {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#tokens === "") return;
    const text = this.#tokens;
    this.#tokens = "";
    this.#progress(null, text);
  };
}
