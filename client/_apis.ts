/**
 * The implementations behind {@link ToolAPI}, {@link ToolkitAPI} and
 * {@link SkillAPI}: each method builds its request, picks its deadline and
 * label, and reads the answer through `_wire.ts`.
 *
 * @module
 */

import type { Connection } from "./_connection.ts";
import type { ToolAPI } from "./tools.ts";
import type { ToolkitAPI } from "./toolkits.ts";
import type { SkillAPI } from "./skills.ts";
import {
  readSkillCall,
  readSkillDiscover,
  readToolCall,
  readToolkitConfigure,
  readToolkitList,
  readToolList,
  skillCallRequest,
  skillDiscoverRequest,
  toolCallRequest,
  toolkitConfigureRequest,
  toolkitListRequest,
  toolListRequest,
} from "./_wire.ts";
import type { RequestOptions, WireMessage } from "./types.ts";

/** What the APIs share with the client that made them. */
export interface ApiContext {
  connection: Connection;
  sessionId: string;
  /** Deadline in ms for requests that do not run code. */
  timeout: number;
  /** Extra ms to wait past a call's own limit for the host's answer. */
  timeoutGrace: number;
}

/** Sends a request that does not stream and waits for its answer. */
export function ask<T>(
  context: ApiContext,
  message: WireMessage,
  label: string,
  read: (message: WireMessage, label: string) => T,
  options: RequestOptions = {},
): Promise<T> {
  return Promise.resolve(context.connection.request(message, {
    label,
    timeout: options.timeout ?? context.timeout,
    signal: options.signal,
    decode: (answer) => read(answer, label),
  }));
}

/** Builds the client's `tools`. */
export function createToolAPI(context: ApiContext): ToolAPI {
  const tools: ToolAPI = {
    list: (options = {}) =>
      ask(
        context,
        toolListRequest(options),
        options.query ? `search tools for "${options.query}"` : "list tools",
        readToolList,
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
      return context.connection.request(
        toolCallRequest(name, args, {
          sessionId: context.sessionId,
          timeout,
          streaming: options.streaming ?? true,
          correlationId: options.correlationId ?? "",
        }),
        {
          label,
          timeout: timeout + context.timeoutGrace,
          signal: options.signal,
          onEvent: options.onEvent,
          decode: (answer) => readToolCall(answer, label),
        },
      );
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
        toolkitListRequest(options),
        "list toolkits",
        readToolkitList,
        options,
      ),
    configure: async (name, config = {}, options = {}) => {
      await ask(
        context,
        toolkitConfigureRequest(name, config, {
          sessionId: context.sessionId,
        }),
        `configure toolkit "${name}"`,
        readToolkitConfigure,
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
        skillDiscoverRequest(options),
        "discover skills",
        readSkillDiscover,
        options,
      ),
    call: (name, args = {}, options = {}) => {
      const timeout = options.timeout ?? 60_000;
      const label = `call skill "${name}"`;
      return context.connection.request(
        skillCallRequest(name, args, {
          timeout,
          streaming: options.streaming ?? true,
          llmOverride: options.llmOverride ?? null,
          metadata: options.metadata ?? {},
          correlationId: options.correlationId ?? "",
        }),
        {
          label,
          timeout: timeout + context.timeoutGrace,
          signal: options.signal,
          onEvent: options.onEvent,
          decode: (answer) => readSkillCall(answer, label),
        },
      );
    },
  };
}
