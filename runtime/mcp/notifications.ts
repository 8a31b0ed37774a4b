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
import type { CallEvent } from "../../protocol/models.ts";

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
  const token = options.progressToken;
  const coalesceMs = options.coalesceMs ?? 25;
  let sending: Promise<void> = Promise.resolve();
  // MCP asks that progress increase with every notification.
  let last = 0;
  let tokens = "";
  let timer: ReturnType<typeof setTimeout> | undefined;

  const send = (notification: ServerNotification) => {
    // In order, and a client gone mid-call must not fail the call.
    sending = sending.then(() => options.send(notification)).catch(() => {});
  };
  const progress = (value: number | null, message: string) => {
    if (token === undefined) return;
    const next = value !== null && value > last ? value : last + 0.001;
    last = next;
    send({
      method: "notifications/progress",
      params: {
        progressToken: token,
        progress: next,
        ...(value !== null ? { total: 100 } : {}),
        ...(message ? { message } : {}),
      },
    });
  };
  const log = (level: LoggingLevel, data: unknown) =>
    send({
      method: "notifications/message",
      params: { level, logger: options.logger, data },
    });
  const flushTokens = () => {
    clearTimeout(timer);
    timer = undefined;
    if (tokens === "") return;
    const text = tokens;
    tokens = "";
    progress(null, text);
  };

  return {
    onEvent(event) {
      const data = event.data;
      switch (event.kind) {
        case "progress": {
          flushTokens();
          const pct = Number(data.pct);
          progress(
            Number.isFinite(pct) ? pct : null,
            String(data.message ?? ""),
          );
          return;
        }
        case "status":
          flushTokens();
          log("info", String(data.message ?? ""));
          return;
        case "log":
          flushTokens();
          log(
            LEVELS[String(data.level ?? "info").toLowerCase()] ?? "info",
            String(data.message ?? ""),
          );
          return;
        case "llm.token":
          if (token === undefined) return;
          tokens += String(data.text ?? "");
          timer ??= setTimeout(flushTokens, coalesceMs);
          return;
        case "artifact":
          return; // Artifacts arrive whole in the result.
        default:
          flushTokens();
          log("debug", { kind: event.kind, ...data });
      }
    },
    flush() {
      flushTokens();
      return sending;
    },
  };
}
