/**
 * The answer to every A2E request, as a camelCase body keyed by the request
 * type. Handlers return these bodies; the dispatcher wraps one in its
 * envelope with `req_id` and encodes it through `codec.ts`, and the client
 * decodes the wire message back into the same body.
 *
 * @module
 */

import type {
  Skill,
  SkillOutcome,
  Tool,
  Toolkit,
  ToolOutcome,
} from "./domain.ts";
import type { RequestType } from "./messages.ts";

/** The body of `handshake/resp`. */
export interface HandshakeResponse {
  /** The session's id (hex uuid). */
  sessionId: string;
  /** The capabilities the host accepted (empty when refused). */
  acceptedCaps: string[];
  /** How many requests the session may run at once. */
  maxParallel: number;
  /** Whether the host accepted the handshake. */
  ok: boolean;
  /** Why it refused, or `""`. */
  reason: string;
}

/** The body of `pong`. */
export interface PongResponse {
  /** How long the host has been up, in seconds. */
  uptimeSeconds: number;
}

/** The body of `tool/list/resp`. */
export interface ToolListResponse {
  /** The tools found, in the order the host chose. */
  tools: Tool[];
}

/** The body of `tool/call/resp`. */
export interface ToolCallResponse {
  /** What the call produced (failures of the tool included). */
  result: ToolOutcome;
  /** When the answer was made, in Unix seconds. @default now, when encoded */
  createdAt?: number;
}

/** The body of `toolkit/list/resp`. */
export interface ToolkitListResponse {
  /** The toolkits found, sorted by name. */
  toolkits: Toolkit[];
}

/** The body of `toolkit/configure/resp`. */
export interface ToolkitConfigureResponse {
  /** The toolkit named by the request. */
  toolkitName: string;
  /** `"ok"`, or `"error"` with a `message`. */
  status: string;
  /** Why configuring failed, or `null`. */
  message: string | null;
}

/** The body of `skill/discover/resp`. */
export interface SkillDiscoverResponse {
  /** The skills found, sorted by name. */
  skills: Skill[];
}

/** Why a skill call got no result at all (e.g. an unknown skill). */
export interface SkillCallError {
  /** An A2E error code. */
  code: string;
  /** What went wrong. */
  message: string;
  /** Whether trying again may help. */
  retryable: boolean;
}

/** The body of `skill/call/resp`: exactly one of `result` and `error` is set. */
export interface SkillCallResponse {
  /** The skill named by the request. */
  name: string;
  /** What the run produced (failures of the skill included), or `null`. */
  result: SkillOutcome | null;
  /** Why no run happened, or `null`. */
  error: SkillCallError | null;
  /** When the answer was made, in Unix seconds. @default now, when encoded */
  createdAt?: number;
}

/** Every request type that gets an answer (`shutdown` gets none). */
export type AnsweredRequestType = Exclude<RequestType, "shutdown">;

/** The answer body of each request type. */
export interface ResponseMap {
  /** Answered with `handshake/resp`. */
  "handshake/req": HandshakeResponse;
  /** Answered with `pong`. */
  "ping": PongResponse;
  /** Answered with `tool/list/resp`. */
  "tool/list/req": ToolListResponse;
  /** Answered with `tool/call/resp`. */
  "tool/call/req": ToolCallResponse;
  /** Answered with `toolkit/list/resp`. */
  "toolkit/list/req": ToolkitListResponse;
  /** Answered with `toolkit/configure/resp`. */
  "toolkit/configure/req": ToolkitConfigureResponse;
  /** Answered with `skill/discover/resp`. */
  "skill/discover/req": SkillDiscoverResponse;
  /** Answered with `skill/call/resp`. */
  "skill/call/req": SkillCallResponse;
}

/** The answer body of request type `T`. */
export type ResponseBody<T extends AnsweredRequestType> = ResponseMap[T];

/** The wire type of the answer to each request type. */
export const RESPONSE_TYPE: { readonly [T in AnsweredRequestType]: string } = {
  "handshake/req": "handshake/resp",
  "ping": "pong",
  "tool/list/req": "tool/list/resp",
  "tool/call/req": "tool/call/resp",
  "toolkit/list/req": "toolkit/list/resp",
  "toolkit/configure/req": "toolkit/configure/resp",
  "skill/discover/req": "skill/discover/resp",
  "skill/call/req": "skill/call/resp",
};
