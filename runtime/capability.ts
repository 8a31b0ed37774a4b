/**
 * How a capability (tools, toolkits, skill) plugs into the dispatcher: a set
 * of handlers keyed by request type. The dispatcher owns parsing, auth,
 * correlation and error mapping; a handler only does its capability's work.
 *
 * @module
 */

import type { CapabilityName } from "../protocol/codes.ts";
import type { Envelope } from "../protocol/envelope.ts";
import type { Request, RequestType } from "../protocol/messages.ts";

/** A complete outgoing message (built with `envelope()`). */
export type OutgoingMessage = Envelope & Record<string, unknown>;

/** What a handler may know and do about the session a request came on. */
export interface SessionScope {
  /** The handshake's session id (hex uuid). */
  readonly id: string;
  /** The auth token the session presented ("" when none); for per-token policy. */
  readonly token: string;
  /**
   * Per-session state owned by capabilities, keyed by capability (e.g. the
   * toolkit configurations set with `toolkit/configure`). Dropped with the
   * session.
   */
  readonly state: Map<string, unknown>;
  /** Sends a message to this session (events, push messages). */
  send(message: OutgoingMessage): void;
  /** Aborted when the session ends (socket closed, SSE session expired). */
  readonly signal: AbortSignal;
}

/** One request being handled. */
export interface Exchange<T extends RequestType = RequestType> {
  /** The validated request, defaults applied. */
  readonly request: Request<T>;
  /** The session the request came on. */
  readonly session: SessionScope;
  /**
   * Aborted when the session ends, the host shuts down, or the call is
   * cancelled; handlers pass it down to sandboxes and providers.
   */
  readonly signal: AbortSignal;
}

/**
 * Handles one request type and returns the final message (the `.../resp`). Throw a
 * `SkillboxError` to answer with an A2E `error` instead; the dispatcher maps
 * it and echoes `req_id`.
 */
export type Handler<T extends RequestType = RequestType> = (
  exchange: Exchange<T>,
) => Promise<OutgoingMessage>;

/** A capability: its A2E name and the request types it answers. */
export interface Capability {
  /** The name offered in `accepted_caps`. */
  readonly name: CapabilityName;
  /** Handlers keyed by request type (`"tool/list/req"`, ...). */
  readonly handlers: { readonly [T in RequestType]?: Handler<T> };
  /** Releases resources when the host closes. */
  close?(): Promise<void>;
}
