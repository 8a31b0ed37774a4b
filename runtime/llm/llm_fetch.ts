/**
 * The `fetch` an LLM SDK client is built with. Every provider's stream is
 * bounded: an SSE event (or an error body) larger than the turn's byte
 * limit fails the request before the SDK buffers it whole. An endpoint a
 * client or a skill chose also goes through the egress broker's rules, one
 * implementation with `ctx.fetch` and imported MCP servers
 * (`checkedFetch` in `runtime/egress/broker.ts`): its host must be in
 * `llm.allowed_hosts`, its name is resolved in the host, every address is
 * checked (`egress.allow_private_hosts` for private ones), the connection
 * goes to the checked address, redirects stay on its origin with every hop
 * checked, and only the SDK's own headers are sent (none an environment
 * variable added). The operator's own endpoint is reached with the global
 * fetch, and its redirects are followed only on its own origin.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";
import {
  becomesGet,
  checkedFetch,
  type EgressBroker,
  type FetchLike,
  MAX_REDIRECTS,
  REDIRECTS,
} from "../egress/broker.ts";
import { hostMatches } from "../egress/targets.ts";
import { redactUrl } from "./config.ts";

/**
 * What the SDK clients take as `fetch`: the platform's (they call it with a
 * URL and an init; a `Request` is read as its URL).
 */
export type LlmFetch = typeof fetch;

/** What {@link llmFetch} needs. */
export interface LlmFetchOptions {
  /** Largest SSE event or error body accepted, in bytes. */
  maxEventBytes: number;
  /**
   * Set for an endpoint a client or a skill chose: the broker that checks
   * every hop, and the operator's `llm.allowed_hosts`. Unset: an endpoint
   * the operator configured, reached with the global `fetch`.
   */
  chosen?: {
    broker: Pick<EgressBroker, "checkTarget">;
    allowedHosts: readonly string[];
  };
}

// What the SDKs send of their own; anything else on a chosen endpoint came
// from the host's environment (OPENAI_CUSTOM_HEADERS and the like).
const SDK_HEADER =
  /^(accept|content-type|user-agent|authorization|x-api-key|anthropic-version|anthropic-beta|idempotency-key|x-stainless-[a-z0-9-]+)$/;

/**
 * Refuses an endpoint a client or a skill chose whose host the operator
 * has not allowed in `llm.allowed_hosts`, before any connection.
 *
 * @param endpoint the `base_url` (the official API's when unset)
 * @param allowedHosts `llm.allowed_hosts`
 * @throws {SkillboxError} `tool_denied` naming the endpoint and the setting
 * @example
 * ```ts
 * import { checkChosenEndpoint } from "./llm_fetch.ts";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => checkChosenEndpoint("http://169.254.169.254/v1", []),
 *   /Cannot use LLM endpoint "http:\/\/169\.254\.169\.254\/v1": its host is not in llm\.allowed_hosts/,
 * );
 * checkChosenEndpoint("https://llm.example/v1", ["llm.example"]);
 * ```
 */
export function checkChosenEndpoint(
  endpoint: string,
  allowedHosts: readonly string[],
): void {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw endpointError(endpoint, "not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw endpointError(endpoint, `"${url.protocol}" is not http or https`);
  }
  if (!allowedHosts.some((entry) => hostMatches(url, entry))) {
    throw endpointError(
      endpoint,
      `its host is not in llm.allowed_hosts (the operator's list of endpoints a client or a skill may choose)`,
    );
  }
}

/**
 * The fetch for one provider client.
 *
 * @param endpoint the client's `base_url`
 * @param options the event bound, and the broker for a chosen endpoint
 * @returns the fetch to give the SDK
 * @example A chosen endpoint that resolves to loopback is refused
 * ```ts
 * import { llmFetch } from "./llm_fetch.ts";
 * import { EgressBroker } from "../egress/broker.ts";
 * import assert from "node:assert/strict";
 * const broker = new EgressBroker({ resolve: () => Promise.resolve(["127.0.0.1"]) });
 * const fetch = llmFetch("http://llm.example/v1", {
 *   maxEventBytes: 1024,
 *   chosen: { broker, allowedHosts: ["llm.example"] },
 * });
 * await assert.rejects(
 *   fetch("http://llm.example/v1/chat/completions"),
 *   /Cannot use LLM endpoint "http:\/\/llm\.example\/v1": Host "llm\.example" resolves to 127\.0\.0\.1/,
 * );
 * ```
 */
export function llmFetch(
  endpoint: string,
  options: LlmFetchOptions,
): LlmFetch {
  const base = options.chosen
    ? chosenFetch(endpoint, options.chosen)
    : ownOriginFetch(endpoint);
  return async (input, init) => {
    const res = await base(input instanceof Request ? input.url : input, init);
    if (!res.body) return res;
    const max = options.maxEventBytes;
    if (res.ok) return new Response(res.body.pipeThrough(eventGuard(max)), res);
    // An error answer's body is read here whole, within `max` bytes in all:
    // the SDKs read it whole before they throw, and blank lines in it would
    // pass the event bound. Past `max` the connection is dropped and the
    // turn fails.
    const tooBig = new SkillboxError(
      "skill_error",
      `LLM endpoint answered HTTP ${res.status} with an error body of more than ${max} bytes: the limit follows llm.max_response_bytes`,
      { detail: { limit: "max_response_bytes", status: res.status } },
    );
    const body = res.body.pipeThrough(eventGuard(max, tooBig));
    return new Response(await new Response(body).arrayBuffer(), res);
  };
}

// The operator's endpoint, reached with the global fetch: a redirect is
// followed only on the endpoint's own origin. Another origin could be an
// address only the host can reach (metadata, an internal service), which
// would get the conversation and answer into the error the skill reads.
function ownOriginFetch(endpoint: string): FetchLike {
  const origin = new URL(endpoint).origin;
  return async (input, init = {}) => {
    let url = new URL(String(input));
    let request: RequestInit = { ...init, redirect: "manual" };
    for (let hop = 0;; hop++) {
      const res = await fetch(url, request);
      const location = res.headers.get("location");
      if (!REDIRECTS.includes(res.status) || location === null) return res;
      await res.body?.cancel();
      const next = new URL(location, url);
      const refused = next.origin !== origin
        ? `to another origin, "${next.origin}": not followed`
        : hop >= MAX_REDIRECTS
        ? `more than ${MAX_REDIRECTS} times`
        : null;
      if (refused !== null) {
        throw new SkillboxError(
          "skill_error",
          `LLM endpoint "${redactUrl(endpoint)}" redirected ${refused}`,
        );
      }
      const method = (request.method ?? "GET").toUpperCase();
      if (becomesGet(res.status, method)) {
        const headers = new Headers(request.headers);
        headers.delete("content-type");
        request = { ...request, method: "GET", body: null, headers };
      }
      url = next;
    }
  };
}

function chosenFetch(
  endpoint: string,
  chosen: NonNullable<LlmFetchOptions["chosen"]>,
): FetchLike {
  const origin = new URL(endpoint);
  const checked = checkedFetch(chosen.broker, {
    origin,
    allow: [[...chosen.allowedHosts]],
  });
  return async (input, init = {}) => {
    const headers = new Headers();
    new Headers(init.headers).forEach((value, name) => {
      if (SDK_HEADER.test(name)) headers.set(name, value);
    });
    try {
      return await checked(input, { ...init, headers });
    } catch (error) {
      if (init.signal?.aborted) throw error;
      // Only a refusal (the broker's checks, checkedFetch's TypeError for
      // another origin or too many redirects) is the endpoint's fault; a
      // connection failure goes to the SDK, which reports it as one.
      if (!(error instanceof SkillboxError || error instanceof TypeError)) {
        throw error;
      }
      throw new SkillboxError(
        error instanceof SkillboxError ? error.code : "tool_denied",
        `Cannot use LLM endpoint "${redactUrl(endpoint)}": ${error.message}`,
        { cause: error },
      );
    }
  };
}

function endpointError(endpoint: string, reason: string): SkillboxError {
  return new SkillboxError(
    "tool_denied",
    `Cannot use LLM endpoint "${redactUrl(endpoint) || endpoint}": ${reason}`,
  );
}

/**
 * Fails a response body when one SSE event (the bytes between two blank
 * lines), or a body with no blank line at all, passes `max` bytes: the SDKs
 * buffer an event whole before parsing it.
 *
 * @param max the largest event, in bytes
 * @param whole set: the whole body is bounded instead (blank lines do not
 *   start the count anew), and this error fails it @default events bounded
 * @returns a byte stream transform
 * @example
 * ```ts
 * import { eventGuard } from "./llm_fetch.ts";
 * import { SkillboxError } from "../../protocol/errors.ts";
 * import assert from "node:assert/strict";
 * const ok = new Response(new Response("data: a\n\ndata: b\n\n").body!.pipeThrough(eventGuard(10)));
 * assert.equal(await ok.text(), "data: a\n\ndata: b\n\n");
 * const big = new Response(new Response("data: " + "x".repeat(20)).body!.pipeThrough(eventGuard(10)));
 * await assert.rejects(big.text(), /event of more than 10 bytes/);
 * // With an error given, blank lines do not start the count anew.
 * const tooBig = new SkillboxError("skill_error", "body too big");
 * const body = new Response("a\n\n".repeat(5)).body!;
 * await assert.rejects(new Response(body.pipeThrough(eventGuard(10, tooBig))).text(), /body too big/);
 * ```
 */
export function eventGuard(
  max: number,
  whole?: SkillboxError,
): TransformStream<Uint8Array> {
  let size = 0;
  let last = 0; // the previous byte, to spot a blank line across chunks
  return new TransformStream<Uint8Array>({
    transform(chunk, controller) {
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i]!;
        const newline = b === 10 || b === 13;
        // "\n\n", "\r\r" and the "\n\r" inside "\r\n\r\n" end an event.
        if (
          !whole && newline && (last === 10 || last === 13) &&
          !(last === 13 && b === 10)
        ) {
          size = 0;
        } else if (++size > max) {
          controller.error(
            whole ?? new SkillboxError(
              "skill_error",
              `LLM endpoint sent an event of more than ${max} bytes: the limit follows llm.max_response_bytes`,
              { detail: { limit: "max_response_bytes" } },
            ),
          );
          return;
        }
        last = b;
      }
      controller.enqueue(chunk);
    },
  });
}
