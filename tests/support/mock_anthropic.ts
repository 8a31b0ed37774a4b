/**
 * A local server that speaks the Anthropic Messages streaming format: named
 * server-sent events `message_start`, `content_block_start`, `ping`,
 * `content_block_delta` (`text_delta`, `input_json_delta`),
 * `content_block_stop`, `message_delta` and `message_stop`, scripted turn by
 * turn with the same {@link MockTurn} scripts as `mock_openai.ts`.
 *
 * @module
 */

import {
  argumentsText,
  type MockDialect,
  type MockLlmServer,
  type MockScript,
  type MockServerOptions,
  type MockTurn,
  serveMock,
  splitInto,
  writeTokens,
} from "./mock_openai.ts";

export type {
  MockLlmServer,
  MockScript,
  MockServerOptions,
  MockToolCall,
  MockTurn,
  RecordedRequest,
  TokenWrite,
} from "./mock_openai.ts";

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

const anthropicDialect: MockDialect = {
  path: "/v1/messages",
  urlSuffix: "",
  errorBody(status, message) {
    return {
      type: "error",
      error: { type: ERROR_TYPES[status] ?? "api_error", message },
    };
  },
  *flood(turn, request) {
    const event = (type: string, fields: Record<string, unknown>) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
    yield event("message_start", {
      message: {
        id: `msg_flood${request.index}`,
        type: "message",
        role: "assistant",
        model: String(request.body.model ?? "mock"),
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    });
    const piece = "x".repeat(1000);
    const toolUse = (index: number) =>
      event("content_block_start", {
        index,
        content_block: {
          type: "tool_use",
          id: `toolu_${index}`,
          name: "echo",
          input: {},
        },
      });
    const json = (index: number, partial_json: string) =>
      event("content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json },
      });
    if (turn.flood === "text") {
      yield event("content_block_start", {
        index: 0,
        content_block: { type: "text", text: "" },
      });
      const delta = event("content_block_delta", {
        index: 0,
        delta: { type: "text_delta", text: piece },
      });
      for (;;) yield delta;
    }
    if (turn.flood === "tool_arguments") {
      yield toolUse(0);
      yield json(0, '{"text": "');
      const more = json(0, piece);
      for (;;) yield more;
    }
    const count = turn.flood_count ?? 10_000;
    for (let n = 0; n < count; n++) {
      yield toolUse(n);
      yield json(n, "{}");
      yield event("content_block_stop", { index: n });
    }
    yield event("message_delta", {
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { output_tokens: count },
    });
    yield event("message_stop", {});
  },
  async writeTurn(turn: MockTurn, request, out) {
    const model = String(request.body.model ?? "mock");
    const usage = turn.usage ??
      { input_tokens: 10, output_tokens: turn.tokens?.length ?? 0 };
    const event = (type: string, fields: Record<string, unknown>) =>
      out.send(JSON.stringify({ type, ...fields }), type);

    event("message_start", {
      message: {
        id: `msg_mock${request.index}`,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
      },
    });
    let block = 0;
    const hasText = (turn.tokens?.length ?? 0) > 0 || turn.hang === true;
    if (hasText) {
      event("content_block_start", {
        index: block,
        content_block: { type: "text", text: "" },
      });
    }
    event("ping", {});
    const more = await writeTokens(turn, out, (text) => [
      JSON.stringify({
        type: "content_block_delta",
        index: block,
        delta: { type: "text_delta", text },
      }),
      "content_block_delta",
    ]);
    if (!more || turn.drop) return;
    if (turn.stream_error) {
      out.send(
        JSON.stringify({ type: "error", error: turn.stream_error }),
        "error",
      );
      return;
    }
    if (hasText) {
      event("content_block_stop", { index: block });
      block++;
    }
    const calls = turn.tool_calls ?? [];
    calls.forEach((call, n) => {
      event("content_block_start", {
        index: block,
        content_block: {
          type: "tool_use",
          id: call.id ?? `toolu_mock${request.index}_${n}`,
          name: call.name,
          input: {},
        },
      });
      // The real API opens with an empty partial_json, then the pieces.
      for (const piece of ["", ...splitInto(argumentsText(call), 3)]) {
        event("content_block_delta", {
          index: block,
          delta: { type: "input_json_delta", partial_json: piece },
        });
      }
      event("content_block_stop", { index: block });
      block++;
    });
    event("message_delta", {
      delta: {
        stop_reason: turn.stop_reason ??
          (calls.length > 0 ? "tool_use" : "end_turn"),
        stop_sequence: null,
      },
      usage: { output_tokens: usage.output_tokens },
    });
    event("message_stop", {});
  },
};

/**
 * Starts a mock Anthropic Messages server on 127.0.0.1 (random port).
 *
 * @param script one {@link MockTurn} per request, or a function of the request
 * @param options `onTokenWritten` hook
 * @returns the server; its `url` is the `base_url` (the origin)
 * @example A rate-limited turn, then an answer
 * ```ts ignore
 * await using mock = startMockAnthropic([
 *   { status: 429, error_message: "Slow down" },
 *   { tokens: ["Hi"] },
 * ]);
 * ```
 */
export function startMockAnthropic(
  script: MockScript,
  options?: MockServerOptions,
): MockLlmServer {
  return serveMock(anthropicDialect, script, options);
}
