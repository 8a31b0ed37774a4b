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

/**
 * A complete outgoing wire message (encoded by `protocol/responses.ts`).
 *
 * @example Read a host's answers as wire messages
 * ```ts
 * import { createHost } from "./host.ts";
 * import type { OutgoingMessage } from "./capability.ts";
 * import assert from "node:assert/strict";
 * const host = createHost({ capabilities: [] });
 * const pong: OutgoingMessage = await host.request({ type: "ping" });
 * // Wire fields, snake_case; `req_id` names the request answered.
 * assert.equal(pong.type, "pong");
 * assert.equal(typeof pong.req_id, "string");
 * assert.equal(typeof pong.uptime_seconds, "number");
 * const refused = await host.request({ type: "tool/list/req" });
 * assert.equal(refused.type, "error");
 * assert.equal(refused.code, "invalid_message");
 * await host.close();
 * ```
 */
export type OutgoingMessage = EncodedMessage;

/**
 * What a handler may know and do about the session a request came on.
 *
 * @example Count a session's calls in its own state
 * ```ts
 * import { createHost } from "./host.ts";
 * import type { SessionScope } from "./capability.ts";
 * import { toolOutcome } from "../protocol/tool.ts";
 * import assert from "node:assert/strict";
 * function countCall(session: SessionScope): number {
 *   const calls = (session.state.get("counter") as number | undefined) ?? 0;
 *   session.state.set("counter", calls + 1);
 *   return calls + 1;
 * }
 * const host = createHost({
 *   capabilities: [{
 *     name: "tools",
 *     handlers: {
 *       "tool/call/req": ({ request, session }) =>
 *         Promise.resolve({
 *           result: toolOutcome({
 *             success: true,
 *             toolName: request.toolName,
 *             data: { calls: countCall(session), token: session.token },
 *             durationMs: 0,
 *           }),
 *         }),
 *     },
 *   }],
 * });
 * await host.callTool("count", {});
 * // In-process calls share one trusted session, which presented no token.
 * const second = await host.callTool("count", {});
 * assert.deepEqual(second.data, { calls: 2, token: "" });
 * await host.close();
 * ```
 */
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

/**
 * One request being handled.
 *
 * @example Hold a call until it is cancelled
 * ```ts
 * import { createHost } from "./host.ts";
 * import type { Exchange } from "./capability.ts";
 * import assert from "node:assert/strict";
 * const started = Promise.withResolvers<string>();
 * // What a handler passing its signal down to a sandbox would see.
 * function untilCancelled(exchange: Exchange<"tool/call/req">): Promise<never> {
 *   const { request, signal } = exchange;
 *   started.resolve(request.toolName);
 *   return new Promise((_, reject) => {
 *     signal.addEventListener("abort", () => reject(signal.reason));
 *   });
 * }
 * const host = createHost({
 *   capabilities: [{
 *     name: "tools",
 *     handlers: { "tool/call/req": untilCancelled },
 *   }],
 * });
 * const cancel = new AbortController();
 * const call = host.callTool("wait", {}, { signal: cancel.signal });
 * // The wire's `tool_name`, decoded to camelCase.
 * assert.equal(await started.promise, "wait");
 * cancel.abort();
 * await assert.rejects(call, /Cancelled "tool\/call\/req"/);
 * await host.close();
 * ```
 */
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
 *
 * @example Echo a tool's arguments, refuse other tools
 * ```ts
 * import { createHost } from "./host.ts";
 * import type { Handler } from "./capability.ts";
 * import { SkillboxError } from "../protocol/errors.ts";
 * import { toolOutcome } from "../protocol/tool.ts";
 * import assert from "node:assert/strict";
 * const echo: Handler<"tool/call/req"> = ({ request }) => {
 *   if (request.toolName !== "echo") {
 *     return Promise.reject(
 *       new SkillboxError("unknown_tool", `Unknown tool "${request.toolName}"`),
 *     );
 *   }
 *   return Promise.resolve({
 *     result: toolOutcome({
 *       success: true,
 *       toolName: "echo",
 *       data: request.arguments,
 *       durationMs: 0,
 *     }),
 *   });
 * };
 * const host = createHost({
 *   capabilities: [{ name: "tools", handlers: { "tool/call/req": echo } }],
 * });
 * assert.deepEqual((await host.callTool("echo", { a: 1 })).data, { a: 1 });
 * await assert.rejects(host.callTool("other", {}), { code: "unknown_tool" });
 * await host.close();
 * ```
 */
export type Handler<T extends AnsweredRequestType = AnsweredRequestType> = (
  exchange: Exchange<T>,
) => Promise<ResponseMap[T]>;

/**
 * A capability: its A2E name and the request types it answers.
 *
 * @example Serve a tool list, closed with the host
 * ```ts
 * import { createHost } from "./host.ts";
 * import type { Capability } from "./capability.ts";
 * import { tool } from "../protocol/tool.ts";
 * import assert from "node:assert/strict";
 * let closed = false;
 * const tools: Capability = {
 *   name: "tools",
 *   handlers: {
 *     "tool/list/req": () =>
 *       Promise.resolve({
 *         tools: [tool({ name: "hello", description: "Says hello" })],
 *       }),
 *   },
 *   close() {
 *     closed = true;
 *     return Promise.resolve();
 *   },
 * };
 * const host = createHost({ capabilities: [tools] });
 * assert.deepEqual(host.capabilities, ["tools"]);
 * const answer = await host.request({ type: "tool/list/req" });
 * assert.equal(answer.type, "tool/list/resp");
 * assert.deepEqual((answer.tools as { name: string }[]).map((t) => t.name), [
 *   "hello",
 * ]);
 * await host.close();
 * assert.equal(closed, true);
 * ```
 */
export interface Capability {
  /** The name offered in `accepted_caps`. */
  readonly name: CapabilityName;
  /** Handlers keyed by request type (`"tool/list/req"`, ...). */
  readonly handlers: { readonly [T in AnsweredRequestType]?: Handler<T> };
  /** Releases resources when the host closes. */
  close?(): Promise<void>;
}
