/**
 * A local server that speaks the OpenAI Chat Completions streaming format
 * (`chat.completion.chunk` server-sent events ending in `data: [DONE]`),
 * scripted turn by turn. Tests and benches point the official `openai` client
 * at it through `base_url`.
 *
 * The script types ({@link MockTurn}) are shared with `mock_anthropic.ts`, so
 * one script drives either provider.
 *
 * @module
 */

/** A tool call the mock model makes. */
export interface MockToolCall {
  /** @default "call_<turn>_<n>" */
  id?: string;
  name: string;
  /** An object (serialized) or raw JSON text (to test bad arguments). */
  arguments: Record<string, unknown> | string;
}

/** One scripted answer: what the mock model does for one request. */
export interface MockTurn {
  /** Text tokens, each written as its own event, in order. @default [] */
  tokens?: string[];
  /**
   * Wait this long before each token, as a real model does between tokens;
   * each token then leaves in its own write, after the response headers.
   * Unset: all tokens are written at once, in one burst that leaves with the
   * response headers. @default undefined
   */
  token_interval_ms?: number;
  /**
   * Awaited after the tokens are written and before the rest: lets a test
   * observe tokens while the call is still in flight, then release it.
   */
  pause?: Promise<unknown>;
  /**
   * Stop after the tokens and hold the stream open until the client goes
   * away (for cancellation tests). @default false
   */
  hang?: boolean;
  /**
   * After the tokens, send the provider's in-stream error event (HTTP 200
   * already sent) and end, as an overloaded provider does.
   */
  stream_error?: { type: string; message: string };
  /** After the tokens, close the stream with no end marker. @default false */
  drop?: boolean;
  /** Tool calls, their arguments split across several deltas. @default [] */
  tool_calls?: MockToolCall[];
  /**
   * The provider's own stop reason. @default `tool_calls`/`tool_use` when
   * there are tool calls, else `stop`/`end_turn`
   */
  stop_reason?: string;
  /** @default {input_tokens: 10, output_tokens: number of tokens} */
  usage?: { input_tokens: number; output_tokens: number };
  /** Answer with this HTTP status and an error body instead of a stream. */
  status?: number;
  /** The error body's message when `status` is set. @default "Mock error" */
  error_message?: string;
  /**
   * Answer 307 to this URL instead of a stream (a hostile endpoint's
   * redirect). @default undefined
   */
  redirect?: string;
  /**
   * A hostile stream, produced as the client reads (so the mock itself
   * holds nothing): `text` sends text deltas forever, `tool_arguments` one
   * tool call whose arguments never end, `tool_calls` {@link flood_count}
   * tool calls and then a normal end. Ends only when the client leaves
   * (or after the calls). @default undefined
   */
  flood?: "text" | "tool_arguments" | "tool_calls";
  /** How many calls `flood: "tool_calls"` makes. @default 10000 */
  flood_count?: number;
}

/** A request the mock received. */
export interface RecordedRequest {
  /** 0-based index of the request (and of the script turn it consumed). */
  index: number;
  method: string;
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The parsed JSON body. */
  body: Record<string, unknown>;
}

/** When the mock wrote one text token (for relay-latency benches). */
export interface TokenWrite {
  /** Index of the request the token belongs to. */
  index: number;
  text: string;
  /** Epoch milliseconds, sub-ms precision (`performance.timeOrigin + now()`). */
  at: number;
}

/** A script: a list consumed one turn per request, or a function. */
export type MockScript =
  | MockTurn[]
  | ((request: RecordedRequest) => MockTurn | Promise<MockTurn>);

/** Options of {@link startMockOpenAI} and `startMockAnthropic`. */
export interface MockServerOptions {
  /** Called right after each text token is enqueued to the response. */
  onTokenWritten?: (write: TokenWrite) => void;
}

/** A running mock provider. */
export interface MockLlmServer extends AsyncDisposable {
  /** The `base_url` to configure (`…/v1` for OpenAI, the origin for Anthropic). */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Every text token written, in order. */
  tokens: TokenWrite[];
  /**
   * Resolves when the client closed request `index`'s stream before the mock
   * finished it (an abort), so tests can see the connection really closed.
   */
  disconnected(index: number): Promise<void>;
  /** Resolves when request `index` has been received. */
  received(index: number): Promise<RecordedRequest>;
  /** Stops the server. */
  close(): Promise<void>;
}

/** Epoch milliseconds with sub-millisecond precision. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** What a provider-specific writer needs from the shared server. */
export interface TurnWriter {
  /** Writes one SSE event (`event:` line only when `event` is given). */
  send(data: string, event?: string): void;
  /** Writes one text token event and records it. */
  token(data: string, text: string, event?: string): void;
  /** Resolves when the client has gone away. */
  gone: Promise<void>;
}

/** Provider specifics plugged into {@link serveMock}. */
export interface MockDialect {
  /** Path of the endpoint (`/v1/chat/completions`, `/v1/messages`). */
  path: string;
  /** Prefix added to the server's origin to form `url`. */
  urlSuffix: string;
  /** The JSON error body for an HTTP error status. */
  errorBody(status: number, message: string): Record<string, unknown>;
  /**
   * The SSE frames (`data: ...\n\n`, with `event:` where the provider
   * uses it) of a `flood` turn, made lazily.
   */
  flood(turn: MockTurn, request: RecordedRequest): Iterator<string>;
  /** Writes one scripted turn as the provider's stream. */
  writeTurn(
    turn: MockTurn,
    request: RecordedRequest,
    out: TurnWriter,
  ): Promise<void>;
}

/**
 * Runs a scripted provider on 127.0.0.1 with a random port. Shared by both
 * mocks; exported only for `mock_anthropic.ts`.
 */
export function serveMock(
  dialect: MockDialect,
  script: MockScript,
  options: MockServerOptions = {},
): MockLlmServer {
  const requests: RecordedRequest[] = [];
  const tokens: TokenWrite[] = [];
  const disconnects = new Map<number, PromiseWithResolvers<void>>();
  const arrivals = new Map<number, PromiseWithResolvers<RecordedRequest>>();
  const slot = <T>(map: Map<number, PromiseWithResolvers<T>>, i: number) => {
    let entry = map.get(i);
    if (!entry) {
      entry = Promise.withResolvers<T>();
      map.set(i, entry);
    }
    return entry;
  };
  const encoder = new TextEncoder();
  // Open streams, so close() can end them instead of waiting on a paused or
  // hanging turn forever (Deno's shutdown waits for responses to finish).
  const open = new Set<() => void>();

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== dialect.path) {
        return Response.json({ error: { message: "Not found" } }, {
          status: 404,
        });
      }
      const body = await req.json() as Record<string, unknown>;
      const index = requests.length;
      const record: RecordedRequest = {
        index,
        method: req.method,
        path: url.pathname,
        headers: Object.fromEntries(req.headers),
        body,
      };
      requests.push(record);
      slot(arrivals, index).resolve(record);

      const turn = typeof script === "function"
        ? await script(record)
        : script[index];
      if (!turn) {
        return errorResponse(
          dialect,
          500,
          `Mock script exhausted: no turn for request ${index}`,
        );
      }
      if (turn.status !== undefined) {
        return errorResponse(
          dialect,
          turn.status,
          turn.error_message ?? "Mock error",
        );
      }
      if (turn.redirect !== undefined) {
        return new Response(null, {
          status: 307,
          headers: { location: turn.redirect },
        });
      }
      if (body.stream !== true) {
        return errorResponse(dialect, 400, "The mock only streams");
      }
      if (turn.flood !== undefined) {
        return floodResponse(dialect.flood(turn, record), () => {
          slot(disconnects, index).resolve();
        });
      }

      const gone = Promise.withResolvers<void>();
      let finished = false;
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          controller = c;
        },
        cancel() {
          // The client closed the connection: what abort tests wait for.
          gone.resolve();
          if (!finished) slot(disconnects, index).resolve();
        },
      });
      const send = (data: string, event?: string) => {
        const head = event === undefined ? "" : `event: ${event}\n`;
        try {
          controller.enqueue(encoder.encode(`${head}data: ${data}\n\n`));
        } catch {
          // The stream was cancelled; the writer notices through `gone`.
        }
      };
      const end = () => {
        gone.resolve();
        try {
          controller.close();
        } catch {
          // Already closed or cancelled.
        }
      };
      open.add(end);
      const writer: TurnWriter = {
        send,
        token(data, text, event) {
          send(data, event);
          const write = { index, text, at: nowMs() };
          tokens.push(write);
          options.onTokenWritten?.(write);
        },
        gone: gone.promise,
      };
      (async () => {
        try {
          await dialect.writeTurn(turn, record, writer);
          finished = true;
          controller.close();
        } catch {
          // Cancelled mid-write: nothing left to do.
        } finally {
          open.delete(end);
        }
      })();
      return new Response(stream, {
        headers: {
          "content-type": "text/event-stream",
          "cache-control": "no-cache",
        },
      });
    },
  );
  const { port } = server.addr;
  const close = async () => {
    for (const end of [...open]) end();
    await server.shutdown();
  };
  return {
    url: `http://127.0.0.1:${port}${dialect.urlSuffix}`,
    requests,
    tokens,
    disconnected: (i) => slot(disconnects, i).promise,
    received: (i) => slot(arrivals, i).promise,
    close,
    [Symbol.asyncDispose]: close,
  };
}

// A stream made as the client pulls it: 64 frames at a time, so the mock
// holds nothing however long the client keeps reading.
function floodResponse(
  frames: Iterator<string>,
  onCancel: () => void,
): Response {
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      let text = "";
      for (let i = 0; i < 64; i++) {
        const next = frames.next();
        if (next.done) {
          if (text) controller.enqueue(encoder.encode(text));
          controller.close();
          return;
        }
        text += next.value;
      }
      controller.enqueue(encoder.encode(text));
    },
    cancel: onCancel,
  }, { highWaterMark: 1 });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream" },
  });
}

function errorResponse(
  dialect: MockDialect,
  status: number,
  message: string,
): Response {
  return Response.json(dialect.errorBody(status, message), { status });
}

/**
 * Writes the text tokens, then honours `pause` and `hang`. Returns false
 * when the turn must stop here (hang, or the client left).
 */
export async function writeTokens(
  turn: MockTurn,
  out: TurnWriter,
  format: (text: string) => [data: string, event?: string],
): Promise<boolean> {
  const interval = turn.token_interval_ms;
  for (const text of turn.tokens ?? []) {
    if (interval !== undefined && !await waitUnlessGone(interval, out.gone)) {
      return false;
    }
    const [data, event] = format(text);
    out.token(data, text, event);
  }
  if (turn.pause) await Promise.race([turn.pause, out.gone]);
  if (turn.hang) {
    await out.gone;
    return false;
  }
  return true;
}

/** Resolves true after `ms`, or false as soon as the client has gone. */
async function waitUnlessGone(
  ms: number,
  gone: Promise<void>,
): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), ms);
      }),
      gone.then(() => false),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Splits text into `n` roughly equal pieces (tool argument deltas). */
export function splitInto(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / n));
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size) {
    parts.push(text.slice(i, i + size));
  }
  return parts.length > 0 ? parts : [""];
}

/** Serializes a mock tool call's arguments. */
export function argumentsText(call: MockToolCall): string {
  return typeof call.arguments === "string"
    ? call.arguments
    : JSON.stringify(call.arguments);
}

const OPENAI_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "invalid_request_error",
  429: "rate_limit_exceeded",
  500: "server_error",
};

const openaiDialect: MockDialect = {
  path: "/v1/chat/completions",
  urlSuffix: "/v1",
  errorBody(status, message) {
    return {
      error: {
        message,
        type: OPENAI_ERROR_TYPES[status] ?? "api_error",
        param: null,
        code: status === 401 ? "invalid_api_key" : null,
      },
    };
  },
  *flood(turn, request) {
    const chunk = (delta: Record<string, unknown>, finish?: string) =>
      `data: ${
        JSON.stringify({
          id: `chatcmpl-flood${request.index}`,
          object: "chat.completion.chunk",
          created: 0,
          model: String(request.body.model ?? "mock"),
          choices: [{ index: 0, delta, finish_reason: finish ?? null }],
        })
      }\n\n`;
    const piece = "x".repeat(1000);
    if (turn.flood === "text") {
      for (;;) yield chunk({ content: piece });
    }
    const call = (index: number, args: string) => ({
      tool_calls: [{
        index,
        id: `call_${index}`,
        type: "function",
        function: { name: "echo", arguments: args },
      }],
    });
    if (turn.flood === "tool_arguments") {
      yield chunk(call(0, '{"text": "'));
      const more = {
        tool_calls: [{ index: 0, function: { arguments: piece } }],
      };
      for (;;) yield chunk(more);
    }
    const count = turn.flood_count ?? 10_000;
    for (let n = 0; n < count; n++) yield chunk(call(n, "{}"));
    yield chunk({}, "tool_calls");
    yield "data: [DONE]\n\n";
  },
  async writeTurn(turn, request, out) {
    const id = `chatcmpl-mock${request.index}`;
    const model = String(request.body.model ?? "mock");
    const created = Math.floor(Date.now() / 1000);
    const wantsUsage = (request.body.stream_options as
      | { include_usage?: boolean }
      | undefined)?.include_usage === true;
    const chunk = (
      delta: Record<string, unknown>,
      finish: string | null = null,
    ) =>
      JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created,
        model,
        system_fingerprint: "fp_mock",
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        ...(wantsUsage ? { usage: null } : {}),
      });

    out.send(chunk({ role: "assistant", content: "", refusal: null }));
    const more = await writeTokens(
      turn,
      out,
      (text) => [chunk({ content: text })],
    );
    if (!more || turn.drop) return;
    if (turn.stream_error) {
      out.send(JSON.stringify({ error: { ...turn.stream_error, code: null } }));
      return;
    }
    const calls = turn.tool_calls ?? [];
    calls.forEach((call, n) => {
      // Like the real API: id, type and name first, then argument pieces.
      out.send(chunk({
        tool_calls: [{
          index: n,
          id: call.id ?? `call_${request.index}_${n}`,
          type: "function",
          function: { name: call.name, arguments: "" },
        }],
      }));
      for (const piece of splitInto(argumentsText(call), 3)) {
        out.send(chunk({
          tool_calls: [{ index: n, function: { arguments: piece } }],
        }));
      }
    });
    const finish = turn.stop_reason ??
      (calls.length > 0 ? "tool_calls" : "stop");
    out.send(chunk({}, finish));
    if (wantsUsage) {
      const usage = turn.usage ??
        { input_tokens: 10, output_tokens: turn.tokens?.length ?? 0 };
      out.send(JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created,
        model,
        system_fingerprint: "fp_mock",
        choices: [],
        usage: {
          prompt_tokens: usage.input_tokens,
          completion_tokens: usage.output_tokens,
          total_tokens: usage.input_tokens + usage.output_tokens,
        },
      }));
    }
    out.send("[DONE]");
  },
};

/**
 * Starts a mock OpenAI Chat Completions server on 127.0.0.1 (random port).
 *
 * @param script one {@link MockTurn} per request, or a function of the request
 * @param options `onTokenWritten` hook
 * @returns the server; its `url` is the `base_url` (ends in `/v1`)
 * @example Two scripted turns
 * ```ts ignore
 * await using mock = startMockOpenAI([
 *   { tool_calls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
 *   { tokens: ["It is ", "3"] },
 * ]);
 * ```
 */
export function startMockOpenAI(
  script: MockScript,
  options?: MockServerOptions,
): MockLlmServer {
  return serveMock(openaiDialect, script, options);
}
