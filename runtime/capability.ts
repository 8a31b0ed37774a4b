/**
 * How a capability (tools, toolkits, skill) plugs into the dispatcher: a set
 * of handlers keyed by request type. The dispatcher owns parsing, auth,
 * correlation and error mapping; a handler only does its capability's work.
 *
 * @module
 */

import type { CapabilityName } from "../protocol/codes.ts";
import type {
  AnsweredRequestType,
  EncodedMessage,
  ResponseMap,
} from "../protocol/responses.ts";
import type { Request, RequestType } from "../protocol/requests.ts";

/** A complete outgoing wire message (encoded by `protocol/responses.ts`). */
export type OutgoingMessage = EncodedMessage;

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
  /** The validated request, defaults applied, decoded to camelCase. */
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
 * Handles one request type and returns the answer's body (camelCase, see
 * `protocol/responses.ts`); the dispatcher wraps it in its envelope with
 * `req_id` and encodes it. Throw a `SkillboxError` to answer with an A2E
 * `error` instead.
 */
export type Handler<T extends AnsweredRequestType = AnsweredRequestType> = (
  exchange: Exchange<T>,
) => Promise<ResponseMap[T]>;

/** A capability: its A2E name and the request types it answers. */
export interface Capability {
  /** The name offered in `accepted_caps`. */
  readonly name: CapabilityName;
  /** Handlers keyed by request type (`"tool/list/req"`, ...). */
  readonly handlers: { readonly [T in AnsweredRequestType]?: Handler<T> };
  /** Releases resources when the host closes. */
  close?(): Promise<void>;
}
