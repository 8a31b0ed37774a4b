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
import { printableLine } from "../protocol/lines.ts";
import { decodeLlmChoice, skillOutcome } from "../protocol/skill.ts";
import type { Connection, SendOptions } from "./_connection.ts";
import type { CallToolOptions, ToolAPI } from "./tools.ts";
import type { ToolkitAPI } from "./toolkits.ts";
import type { SkillAPI } from "./skills.ts";
import type { Call } from "./types.ts";

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
 * the expected answer type (anything else fails the call). Without a
 * `timeout` of its own, the request waits the context's.
 */
export function send<T extends AnsweredRequestType, R>(
  context: Pick<ApiContext, "connection" | "timeout">,
  request: RequestBody<T> & { type: T },
  options: Omit<SendOptions<R>, "decode" | "timeout"> & {
    timeout?: number;
    read: (body: ResponseMap[T]) => R;
  },
): Call<R> {
  const { read, label } = options;
  return context.connection.request(encodeRequest(request), {
    ...options,
    timeout: options.timeout ?? context.timeout,
    decode: (answer) => read(decodeResponse(request.type, answer, label)),
  });
}

/**
 * What a tool or skill call adds to its request (`fields`) and to its wait:
 * the host gets the limit in whole seconds (rounded up, so a short one never
 * becomes 0), and the client waits it plus the grace for the host's answer.
 */
function runsCode(
  context: ApiContext,
  options: CallToolOptions,
  defaultTimeout: number,
) {
  const timeout = options.timeout ?? defaultTimeout;
  return {
    fields: {
      correlationId: options.correlationId ?? "",
      streaming: options.streaming ?? true,
      timeout: Math.max(1, Math.ceil(timeout / 1000)),
    },
    wait: { ...options, timeout, grace: context.timeoutGrace },
  };
}

/** Builds the client's `tools`. */
export function createToolAPI(context: ApiContext): ToolAPI {
  const tools: ToolAPI = {
    list: (options = {}) =>
      send(context, {
        type: "tool/list/req",
        filterKind: options.kind ?? "",
        filterTags: options.tags ?? [],
        query: options.query ?? "",
        includeDeferred: options.includeDeferred ?? false,
      }, {
        ...options,
        label: options.query
          ? `search tools for "${options.query}"`
          : "list tools",
        read: (body) => body.tools,
      }),
    search: (query, options = {}) => {
      if (query === "") {
        return Promise.reject(
          new TypeError("Cannot search tools: the query is empty"),
        );
      }
      return tools.list({ ...options, query });
    },
    call: (name, args = {}, options = {}) => {
      const { fields, wait } = runsCode(context, options, 30_000);
      return send(context, {
        type: "tool/call/req",
        sessionId: context.sessionId,
        toolName: name,
        arguments: args,
        ...fields,
      }, {
        ...wait,
        label: `call tool "${name}"`,
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
      send(context, {
        type: "toolkit/list/req",
        filterKind: options.kind ?? "",
        filterTags: options.tags ?? [],
      }, { ...options, label: "list toolkits", read: (body) => body.toolkits }),
    configure: async (name, config = {}, options = {}) => {
      const label = `configure toolkit "${name}"`;
      await send(context, {
        type: "toolkit/configure/req",
        sessionId: context.sessionId,
        toolkitName: name,
        config,
      }, { ...options, label, read: (body) => checkConfigured(body, label) });
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
      send(context, {
        type: "skill/discover/req",
        filterTags: options.tags ?? [],
        filterCategories: options.categories ?? [],
      }, { ...options, label: "discover skills", read: (body) => body.skills }),
    call: (name, args = {}, options = {}) => {
      const { fields, wait } = runsCode(context, options, 60_000);
      const override = options.llmOverride;
      return send(context, {
        type: "skill/call/req",
        name,
        arguments: args,
        llmOverride: override ? decodeLlmChoice({ ...override }) : null,
        metadata: options.metadata ?? {},
        ...fields,
      }, {
        ...wait,
        label: `call skill "${name}"`,
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
    printableLine(`Cannot ${label}: status "${body.status}": ${why}`),
    { detail: { status: body.status, message: body.message } },
  );
}
