/**
 * The in-process transport: requests from the embedding program go through
 * the same dispatcher and handlers as a connection's, on one trusted session,
 * and answers are decoded with the protocol codec.
 *
 * @module
 */

import type { OutgoingMessage } from "../capability.ts";
import type { Dispatcher } from "../dispatcher.ts";
import { Session } from "../session.ts";
import { decodeError, decodeResponse } from "../../protocol/responses.ts";
import {
  type CallEvent,
  decodeEvent,
  type ToolOutcome,
} from "../../protocol/tool.ts";
import type { SkillOutcome } from "../../protocol/skill.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import {
  newId,
  nowSeconds,
  PROTOCOL_VERSION,
} from "../../protocol/envelope.ts";

/**
 * Options for an in-process call.
 *
 * @example Stream a call's events, with a timeout
 * ```ts
 * import { createHost } from "../host.ts";
 * import type { CallOptions } from "./in_process.ts";
 * import { encodeEvent } from "../../protocol/responses.ts";
 * import { toolOutcome } from "../../protocol/tool.ts";
 * import assert from "node:assert/strict";
 * const host = createHost({
 *   capabilities: [{
 *     name: "tools",
 *     handlers: {
 *       "tool/call/req": ({ request, session }) => {
 *         // Events go out only when the caller asked for a stream.
 *         if (request.streaming) {
 *           session.send(encodeEvent("tool/event", request.id, {
 *             kind: "progress",
 *             data: { pct: 50 },
 *             seq: 0,
 *           }));
 *         }
 *         return Promise.resolve({
 *           result: toolOutcome({
 *             success: true,
 *             toolName: request.toolName,
 *             data: { timeout: request.timeout },
 *             durationMs: 0,
 *           }),
 *         });
 *       },
 *     },
 *   }],
 * });
 * const kinds: string[] = [];
 * const options: CallOptions = {
 *   onEvent: (event) => kinds.push(event.kind),
 *   timeout: 5,
 * };
 * const outcome = await host.callTool("work", {}, options);
 * assert.deepEqual(kinds, ["progress"]);
 * assert.deepEqual(outcome.data, { timeout: 5 });
 * await host.close();
 * ```
 */
export interface CallOptions {
  /** Receives the call's events as they happen. */
  onEvent?: (event: CallEvent) => void;
  /** Cancels the call. */
  signal?: AbortSignal;
  /** Seconds before the call times out. @default the request's default */
  timeout?: number;
}

/** Options of {@link createInProcessTransport}. */
export interface InProcessOptions {
  /** The dispatcher every request goes through. */
  dispatcher: Pick<Dispatcher, "receiveValue">;
  /** How many requests run at once; the rest queue. @default 4 */
  maxParallel?: number;
  /** Tells whether the host is closing (new calls are refused). */
  closing: () => boolean;
}

/** The in-process caller of a host. */
export interface InProcessTransport extends InProcessCalls {
  /** The trusted session every in-process request runs on. */
  readonly session: Session;
}

/**
 * The calls an embedder makes on a host's trusted in-process session
 * ({@link Host} offers them too).
 *
 * @example Ping a host on its in-process session
 * ```ts
 * import { createHost } from "../host.ts";
 * import assert from "node:assert/strict";
 * const host = createHost({ capabilities: [] });
 * assert.equal((await host.request({ type: "ping" })).type, "pong");
 * await host.close();
 * ```
 */
export interface InProcessCalls {
  /**
   * Sends one request (wire fields, snake_case; the envelope is added) and
   * resolves with its final answer, a `*\/resp` or an `error`.
   */
  request(
    message: Record<string, unknown> & { type: string },
    options?: CallOptions,
  ): Promise<OutgoingMessage>;
  /**
   * Calls a tool.
   *
   * @throws {SkillboxError} when the host answers with an `error`
   */
  callTool(
    name: string,
    args: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<ToolOutcome>;
  /**
   * Runs a skill.
   *
   * @throws {SkillboxError} when the host answers with an `error`, or with
   *   no result (e.g. an unknown skill)
   */
  callSkill(
    name: string,
    args: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<SkillOutcome>;
}

/**
 * Creates the in-process transport of a host. Its session is shared by every
 * in-process call, so session state (e.g. toolkit configuration) persists
 * across calls, like a connection's would.
 *
 * @param options the dispatcher, the session's limit, the closing flag
 * @returns the transport
 * @example Ping through a dispatcher
 * ```ts
 * import { createInProcessTransport } from "./in_process.ts";
 * import { Dispatcher } from "../dispatcher.ts";
 * import assert from "node:assert/strict";
 * const local = createInProcessTransport({ dispatcher: new Dispatcher(), closing: () => false });
 * const pong = await local.request({ type: "ping" });
 * assert.equal(pong.type, "pong");
 * ```
 */
export function createInProcessTransport(
  options: InProcessOptions,
): InProcessTransport {
  // The requests waiting for their answers, by request id.
  const pending = new Map<string, Waiter>();
  const session = new Session({
    transport: "in-process",
    maxParallel: options.maxParallel,
    // An event goes to its request's listener, a final answer resolves its
    // request; what no request waits for is dropped.
    send: (message) => {
      const waiter = pending.get(String(message.req_id ?? ""));
      if (!waiter) return;
      if (message.type.endsWith("/event")) {
        waiter.onEvent?.(decodeEvent(message));
        return;
      }
      pending.delete(String(message.req_id));
      waiter.resolve(message);
    },
  });
  session.authenticate("accepted", "");
  // One request through the dispatcher, enveloped here; resolves with its
  // final answer. A handshake or shutdown has no answer, so it is refused.
  const request: InProcessCalls["request"] = (message, callOptions = {}) => {
    if (message.type === "handshake/req" || message.type === "shutdown") {
      return Promise.reject(
        new TypeError(
          `Cannot send "${message.type}" in-process: it has no answer`,
        ),
      );
    }
    if (options.closing()) {
      return Promise.reject(
        new SkillboxError("runtime_error", "Cannot call: the host is closed"),
      );
    }
    const id = newId();
    const answer = new Promise<OutgoingMessage>((resolve) => {
      pending.set(id, { resolve, onEvent: callOptions.onEvent });
    });
    options.dispatcher.receiveValue(session, {
      ...message,
      id,
      version: PROTOCOL_VERSION,
      ts: nowSeconds(),
    }, { signal: callOptions.signal });
    return answer;
  };
  // A tool or skill call, streaming when there is a listener; an `error`
  // answer is thrown.
  const call = async (
    message: Record<string, unknown> & { type: string },
    callOptions: CallOptions,
  ): Promise<OutgoingMessage> => {
    const answer = await request({
      ...message,
      streaming: callOptions.onEvent !== undefined,
      ...(callOptions.timeout ? { timeout: callOptions.timeout } : {}),
    }, callOptions);
    if (answer.type === "error") throw decodeError(answer);
    return answer;
  };
  return {
    session,
    request,
    async callTool(name, args, callOptions = {}) {
      const answer = await call({
        type: "tool/call/req",
        tool_name: name,
        arguments: args,
      }, callOptions);
      return decodeResponse("tool/call/req", answer).result;
    },
    async callSkill(name, args, callOptions = {}) {
      const answer = await call({
        type: "skill/call/req",
        name,
        arguments: args,
      }, callOptions);
      const body = decodeResponse("skill/call/req", answer);
      if (body.result) return body.result;
      throw new SkillboxError(
        body.error?.code as SkillboxError["code"] ?? "skill_error",
        body.error?.message ?? `Skill "${name}" returned no result`,
      );
    },
  };
}

/** One request waiting for its answer: who resolves, who gets its events. */
interface Waiter {
  resolve: (message: OutgoingMessage) => void;
  onEvent?: (event: CallEvent) => void;
}
