/**
 * What every transport needs from the host: a way to open sessions (subject
 * to `max_sessions` and host shutdown) and the dispatcher to feed them to.
 *
 * @module
 */

import type { OutgoingMessage } from "../capability.ts";
import type { LimitsConfig } from "../config_schema.ts";
import type { Dispatcher } from "../dispatcher.ts";
import type { Session, TransportKind } from "../session.ts";

/** How a transport opens a session. */
export interface OpenSessionOptions {
  transport: TransportKind;
  /** Delivers one outgoing message. */
  send: (message: OutgoingMessage) => void;
  /** Releases the transport when the session ends. */
  onEnd?: (reason: string) => void;
  /**
   * The request's `Authorization` header, if any: a valid `Bearer` token
   * admits the session at once, an invalid one refuses it (401).
   */
  authorization?: string;
  /**
   * The client's address key (`clientKey` of runtime/doors/auth_throttle.ts),
   * under which failed handshake tokens are throttled; none for transports
   * without an address (stdio, in-process).
   */
  client?: string;
}

/** Why a session was not opened, and the HTTP status that says so. */
export interface Refusal {
  /** 401 for a bad `Authorization` header, 503 when full or closing. */
  status: 401 | 503;
  /** A sentence saying why. */
  reason: string;
}

/** The host as transports see it. */
export interface TransportContext {
  /** Routes messages to answers. */
  readonly dispatcher: Dispatcher;
  /** The host's limits. */
  readonly limits: LimitsConfig;
  /**
   * Opens a session, or says why not (the host is full or closing, a token
   * is refused) with the HTTP status to answer where there is one.
   */
  admitSession(options: OpenSessionOptions): Session | Refusal;
  /** Writes one diagnostic line (never to stdout). */
  log(message: string): void;
}
