/**
 * `ctx.fetch` on the wire between sandbox and host: the request sandbox code
 * hands to the host's egress broker, and what comes back. Bodies travel as
 * text or base64, since the pipe carries JSON.
 *
 * @module
 */

/**
 * An HTTP request for the host to perform.
 *
 * @example A JSON POST
 * ```ts
 * import type { FetchRequest } from "./egress.ts";
 * const request: FetchRequest = {
 *   url: "https://api.example.com/items",
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({ name: "x" }),
 * };
 * ```
 */
export interface FetchRequest {
  /** Absolute http(s) URL. */
  url: string;
  /** The HTTP method. @default "GET" */
  method?: string;
  /** Request headers; the host sets `Host` and framing headers itself. */
  headers?: Record<string, string>;
  /** The body: text, or base64 with `bodyEncoding: "base64"`. */
  body?: string;
  /** How `body` is written. @default "text" */
  bodyEncoding?: "text" | "base64";
  /** `"manual"` returns a redirect as it is. @default "follow" */
  redirect?: "follow" | "manual";
}

/**
 * What the host answers to a {@link FetchRequest}.
 *
 * @example Read a JSON body
 * ```ts
 * import type { FetchRequest, FetchResponse } from "./egress.ts";
 * // `fetch` is a tool's or skill's `ctx.fetch`.
 * async function getJson(fetch: (request: FetchRequest) => Promise<FetchResponse>, url: string): Promise<unknown> {
 *   const response = await fetch({ url, headers: { accept: "application/json" } });
 *   if (response.status !== 200) {
 *     throw new Error(`Cannot get "${response.url}": ${response.status} ${response.statusText}`);
 *   }
 *   if (response.truncated) throw new Error(`Cannot get "${response.url}": the body was cut`);
 *   const bytes = Uint8Array.from(atob(response.bodyBase64), (c) => c.charCodeAt(0));
 *   return JSON.parse(new TextDecoder().decode(bytes));
 * }
 * ```
 */
export interface FetchResponse {
  /** The final URL, after redirects. */
  url: string;
  /** The HTTP status code. */
  status: number;
  /** The HTTP status text. */
  statusText: string;
  /** Response headers, lower-case names. */
  headers: Record<string, string>;
  /** The body, base64 (cut at the host's bound). */
  bodyBase64: string;
  /** True when the body was cut. */
  truncated: boolean;
  /** Every URL redirected through, in order. */
  redirects: string[];
}
