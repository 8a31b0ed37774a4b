/**
 * The one `fetch` the host uses for requests it makes on someone else's
 * behalf outside `ctx.fetch`: imported Streamable HTTP MCP servers, and LLM
 * endpoints chosen by a client or a skill. Every hop goes through the
 * egress broker's rules (the host against the allow-lists given, the name
 * resolved in the host; loopback, private, link-local and metadata
 * addresses refused unless the operator allows the host by name in
 * `egress.allow_private_hosts`), and the connection goes to the address
 * that was checked (no second resolution). Redirects are followed only
 * within the first URL's origin, each hop checked again, so headers (the
 * operator's, an API key) never leave that origin. Responses stream (SSE
 * included).
 *
 * @module
 */

import type http from "node:http";
import { Readable } from "node:stream";
import type { EgressBroker } from "./broker.ts";
import { requestAt } from "./targets.ts";

/** What the SDK's client transport takes as `fetch`. */
export type FetchLike = (
  url: string | URL,
  init?: RequestInit,
) => Promise<Response>;

const MAX_REDIRECTS = 5;
const CHECK_TIMEOUT_MS = 10_000;

/** Where a {@link checkedFetch} may go. */
export interface CheckedFetchOptions {
  /** Requests and redirects must stay on this URL's origin. */
  origin: URL;
  /**
   * Allow-lists every hop's host must match (`name`, `name:port`, `*`), as
   * the broker's `checkTarget` takes them. @default [["*"]]
   */
  allow?: string[][];
}

/**
 * A `fetch` to one origin only, under the broker's rules.
 *
 * @param broker checks each hop's host and addresses
 * @param options the origin to stay on, and the allow-lists
 * @returns the fetch
 * @example A name that resolves to loopback is refused
 * ```ts
 * import { checkedFetch } from "./checked_fetch.ts";
 * import { EgressBroker } from "./broker.ts";
 * import assert from "node:assert/strict";
 * const broker = new EgressBroker({ resolve: () => Promise.resolve(["127.0.0.1"]) });
 * const url = new URL("http://mcp.example/mcp");
 * await assert.rejects(checkedFetch(broker, { origin: url })(url), /not a public address/);
 * ```
 */
export function checkedFetch(
  broker: Pick<EgressBroker, "checkTarget">,
  options: CheckedFetchOptions,
): FetchLike {
  const { origin } = options;
  const allow = options.allow ?? [["*"]];
  return async (input, init = {}) => {
    let url = new URL(String(input));
    let method = (init.method ?? "GET").toUpperCase();
    let body = init.body === undefined || init.body === null
      ? null
      : new Uint8Array(await new Response(init.body).arrayBuffer());
    const headers = new Headers(init.headers);
    for (let hop = 0;; hop++) {
      if (url.origin !== origin.origin) {
        throw new TypeError(
          `Refusing to send a request to "${url.origin}": the server is "${origin.origin}"`,
        );
      }
      const signal = init.signal
        ? AbortSignal.any([init.signal, AbortSignal.timeout(CHECK_TIMEOUT_MS)])
        : AbortSignal.timeout(CHECK_TIMEOUT_MS);
      const address = await broker.checkTarget(url, allow, signal);
      const res = await send(url, address, {
        method,
        headers,
        body,
        signal: init.signal ?? undefined,
      });
      const location = res.headers.location;
      const status = res.statusCode ?? 0;
      if (
        location === undefined || ![301, 302, 303, 307, 308].includes(status)
      ) {
        return toResponse(res, method);
      }
      res.destroy();
      if (hop >= MAX_REDIRECTS) {
        throw new TypeError(`Too many redirects (more than ${MAX_REDIRECTS})`);
      }
      url = new URL(location, url);
      if (
        status === 303 ||
        ((status === 301 || status === 302) && method === "POST")
      ) {
        if (method !== "HEAD") method = "GET";
        body = null;
        headers.delete("content-type");
      }
    }
  };
}

interface Exchange {
  method: string;
  headers: Headers;
  body: Uint8Array | null;
  signal?: AbortSignal;
}

// One HTTP exchange to the checked address; resolves at the headers.
function send(
  url: URL,
  address: string,
  exchange: Exchange,
): Promise<http.IncomingMessage> {
  const headers: Record<string, string> = {};
  exchange.headers.forEach((value, key) => headers[key] = value);
  return requestAt(url, address, { ...exchange, headers });
}

function toResponse(res: http.IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (const [key, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      headers.append(key, v);
    }
  }
  const status = res.statusCode ?? 502;
  const empty = method === "HEAD" || [204, 205, 304].includes(status);
  if (empty) res.destroy();
  return new Response(
    empty ? null : Readable.toWeb(res) as ReadableStream<Uint8Array>,
    { status, statusText: res.statusMessage ?? "", headers },
  );
}
