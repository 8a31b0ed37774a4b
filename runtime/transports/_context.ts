/**
 * What every transport needs from the host: a way to open sessions (subject
 * to `max_sessions` and host shutdown) and the dispatcher to feed them to.
 *
 * @module
 */

import type { OutgoingMessage } from "../capability.ts";
import type { LimitsConfig } from "../config.ts";
import type { Dispatcher } from "../dispatcher.ts";
import type { Session, TransportKind } from "../session.ts";

/** How a transport opens a session. */
export interface OpenSessionOptions {
  transport: TransportKind;
  /** Delivers one outgoing message. */
  send: (message: OutgoingMessage) => void;
  /** Releases the transport when the session ends. */
  onEnd?: (reason: string) => void;
}

/** The host as transports see it. */
export interface TransportContext {
  /** Routes messages to answers. */
  readonly dispatcher: Dispatcher;
  /** The host's limits. */
  readonly limits: LimitsConfig;
  /**
   * Opens a session, or returns a sentence saying why not (the host is full
   * or closing).
   */
  openSession(options: OpenSessionOptions): Session | string;
  /** Writes one diagnostic line (never to stdout). */
  log(message: string): void;
}
