/**
 * The implementations behind {@link ToolAPI}, {@link ToolkitAPI} and
 * {@link SkillAPI}: each method fills its request's fields from its options
 * (every field sent, as the Python SDK does), picks its deadline and label,
 * and takes what it needs from the decoded answer.
 *
 * @module
 */

import { SkillboxError } from "../protocol/errors.ts";
import { encodeRequest, type RequestBody } from "../protocol/requests.ts";
import {
  type AnsweredRequestType,
  decodeResponse,
  type ResponseMap,
  type ToolkitConfigureResponse,
} from "../protocol/responses.ts";
import { decodeLlmChoice, skillOutcome } from "../protocol/skill.ts";
import type { Connection, SendOptions } from "./_connection.ts";
import type { ToolAPI } from "./tools.ts";
import type { ToolkitAPI } from "./toolkits.ts";
import type { SkillAPI } from "./skills.ts";
import type { Call, RequestOptions } from "./types.ts";

/** What the APIs share with the client that made them. */
export interface ApiContext {
  connection: Connection;
  sessionId: string;
  /** Deadline in ms for requests that do not run code. */
  timeout: number;
  /** Extra ms to wait past a call's own limit for the host's answer. */
  timeoutGrace: number;
}

/**
 * Sends one request and reads its answer: `read` gets the decoded body of
 * the expected answer type (anything else fails the call).
 */
export function send<T extends AnsweredRequestType, R>(
  connection: Connection,
  request: RequestBody<T> & { type: T },
  options: Omit<SendOptions<R>, "decode"> & {
    read: (body: ResponseMap[T]) => R;
  },
): Call<R> {
  const { read, ...rest } = options;
  return connection.request(encodeRequest(request), {
    ...rest,
    decode: (answer) =>
      read(decodeResponse(request.type, answer, options.label)),
  });
}

/** Sends a request that does not stream and waits for its answer. */
export function ask<T extends AnsweredRequestType, R>(
  context: ApiContext,
  request: RequestBody<T> & { type: T },
  label: string,
  read: (body: ResponseMap[T]) => R,
  options: RequestOptions = {},
): Promise<R> {
  return Promise.resolve(send(context.connection, request, {
    label,
    timeout: options.timeout ?? context.timeout,
    signal: options.signal,
    read,
  }));
}

/** Builds the client's `tools`. */
export function createToolAPI(context: ApiContext): ToolAPI {
  const tools: ToolAPI = {
    list: (options = {}) =>
      ask(
        context,
        {
          type: "tool/list/req",
          filterKind: options.kind ?? "",
          filterTags: options.tags ?? [],
          query: options.query ?? "",
          includeDeferred: options.includeDeferred ?? false,
        },
        options.query ? `search tools for "${options.query}"` : "list tools",
        (body) => body.tools,
        options,
      ),
    search: (query, options = {}) => {
      if (query === "") {
        return Promise.reject(
          new TypeError("Cannot search tools: the query is empty"),
        );
      }
      return tools.list({ ...options, query });
    },
    call: (name, args = {}, options = {}) => {
      const timeout = options.timeout ?? 30_000;
      const label = `call tool "${name}"`;
      return send(context.connection, {
        type: "tool/call/req",
        sessionId: context.sessionId,
        toolName: name,
        arguments: args,
        correlationId: options.correlationId ?? "",
        streaming: options.streaming ?? true,
        timeout: wireSeconds(timeout),
      }, {
        label,
        timeout,
        grace: context.timeoutGrace,
        signal: options.signal,
        onEvent: options.onEvent,
        read: (body) => body.result,
      });
    },
  };
  return tools;
}

/** Builds the client's `toolkits`. */
export function createToolkitAPI(context: ApiContext): ToolkitAPI {
  const toolkits: ToolkitAPI = {
    list: (options = {}) =>
      ask(
        context,
        {
          type: "toolkit/list/req",
          filterKind: options.kind ?? "",
          filterTags: options.tags ?? [],
        },
        "list toolkits",
        (body) => body.toolkits,
        options,
      ),
    configure: async (name, config = {}, options = {}) => {
      const label = `configure toolkit "${name}"`;
      await ask(
        context,
        {
          type: "toolkit/configure/req",
          sessionId: context.sessionId,
          toolkitName: name,
          config,
        },
        label,
        (body) => checkConfigured(body, label),
        options,
      );
      // Read back the host's state rather than guess it, as the Python SDK does.
      return await toolkits.get(name, options);
    },
    ensure: async (name, config = {}, options = {}) => {
      const kit = await toolkits.get(name, options);
      if (kit?.configured) return kit;
      return await toolkits.configure(name, config, options);
    },
    get: async (name, options = {}) => {
      const all = await toolkits.list(options);
      return all.find((kit) => kit.name === name);
    },
  };
  return toolkits;
}

/** Builds the client's `skills`. */
export function createSkillAPI(context: ApiContext): SkillAPI {
  return {
    discover: (options = {}) =>
      ask(
        context,
        {
          type: "skill/discover/req",
          filterTags: options.tags ?? [],
          filterCategories: options.categories ?? [],
        },
        "discover skills",
        (body) => body.skills,
        options,
      ),
    call: (name, args = {}, options = {}) => {
      const timeout = options.timeout ?? 60_000;
      const label = `call skill "${name}"`;
      const override = options.llmOverride;
      return send(context.connection, {
        type: "skill/call/req",
        name,
        arguments: args,
        correlationId: options.correlationId ?? "",
        timeout: wireSeconds(timeout),
        streaming: options.streaming ?? true,
        llmOverride: override ? decodeLlmChoice({ ...override }) : null,
        metadata: options.metadata ?? {},
      }, {
        label,
        timeout,
        grace: context.timeoutGrace,
        signal: options.signal,
        onEvent: options.onEvent,
        // A failure reported in `error` instead of a result becomes an
        // outcome too, so callers always get one shape.
        read: (body) =>
          body.result ?? skillOutcome({
            success: false,
            durationMs: 0,
            error: body.error?.message ?? "Skill answered without a result",
            errorCode: body.error?.code ?? "skill_error",
          }),
      });
    },
  };
}

// Throws unless the configure answer's status means success.
function checkConfigured(body: ToolkitConfigureResponse, label: string): void {
  if (body.status === "ok" || body.status === "configured") return;
  const why = body.message !== null && body.message !== ""
    ? body.message
    : "no detail";
  throw new SkillboxError(
    "runtime_error",
    `Cannot ${label}: status "${body.status}": ${why}`,
    { detail: { status: body.status, message: body.message } },
  );
}

// A2E timeouts are whole seconds; round up so a short limit never becomes 0.
function wireSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
