/**
 * One HTTP exchange sent to an address the broker has already checked: the
 * connection goes to that address, never to a second answer from DNS, while
 * the URL's host still names the server (Host header, TLS SNI and
 * certificate check). The broker (`ctx.fetch`) and the client transport of
 * imported MCP servers both send through it.
 *
 * @module
 */

import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { hostOf } from "./hosts.ts";

/**
 * A `lookup` for `node:http` and `node:net` that answers every name with
 * one checked address, so the connection never reaches a second answer
 * from DNS.
 *
 * @param address the checked IP address
 * @returns the lookup function
 * @example
 * ```ts
 * import { pinnedLookup } from "./request_at.ts";
 * import assert from "node:assert/strict";
 * pinnedLookup("10.0.0.1")("a.example", {}, (_err, address) => {
 *   assert.equal(address, "10.0.0.1");
 * });
 * ```
 */
export function pinnedLookup(address: string): LookupFunction {
  const family = address.includes(":") ? 6 : 4;
  return (_host, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/** What {@link requestAt} sends. */
export interface AddressedRequest {
  method: string;
  headers: Record<string, string>;
  /** The body; its length becomes `content-length`. */
  body: Uint8Array | null;
  signal?: AbortSignal;
}

/**
 * Sends one request to `address` for `url`; resolves at the response's
 * headers (the body is the caller's to read or destroy).
 *
 * @param url the request's URL (its host names the server)
 * @param address the checked IP address to connect to
 * @param request method, headers, body and signal
 * @returns the response, once its headers arrive
 * @throws the connection's error as Node reports it
 * @example Ask a loopback server by name, connecting to its address
 * ```ts
 * import { requestAt } from "./request_at.ts";
 * import assert from "node:assert/strict";
 * const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} },
 *   (req) => new Response(new URL(req.url).hostname));
 * const url = new URL(`http://no-such-name.invalid:${server.addr.port}/`);
 * const res = await requestAt(url, "127.0.0.1", { method: "GET", headers: {}, body: null });
 * let text = "";
 * for await (const chunk of res) text += chunk;
 * assert.equal(text, "no-such-name.invalid");
 * await server.shutdown();
 * ```
 */
export function requestAt(
  url: URL,
  address: string,
  request: AddressedRequest,
): Promise<http.IncomingMessage> {
  const lookup = pinnedLookup(address);
  const headers = request.body
    ? { ...request.headers, "content-length": String(request.body.length) }
    : request.headers;
  const lib = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request({
      protocol: url.protocol,
      hostname: hostOf(url),
      port: Number(url.port) || undefined,
      path: url.pathname + url.search,
      method: request.method,
      headers,
      lookup,
      agent: false,
      signal: request.signal,
    }, resolve);
    req.on("error", reject);
    req.end(request.body ?? undefined);
  });
}
