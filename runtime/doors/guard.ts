/**
 * The host's one door: every request (A2E over WebSocket and HTTP+SSE,
 * `/mcp`, the console, `/api/*`, `/metrics`, `/health`) passes it before
 * any route or session sees it. It refuses a `Host` the host does not
 * answer to and a browser `Origin` not its own (403, see
 * {@link HostNames}), and throttles failed credentials per client address
 * (429, see {@link AuthThrottle}): an `Authorization` header is checked
 * here, the console's sign-in form by its answer.
 *
 * @module
 */

import { getPath } from "hono/utils/url";
import { bearerToken, isAcceptedToken } from "../admission.ts";
import { AuthThrottle, clientKey, widestNetwork } from "./auth_throttle.ts";
import { HostNames } from "./host_names.ts";

/** A request handler as `Deno.serve` calls it. */
export type HttpHandler = (
  request: Request,
  info?: Deno.ServeHandlerInfo,
) => Response | Promise<Response>;

/** Options of {@link createDoor}. */
export interface DoorOptions {
  /** The listen hostname and the operator's extra names and origins. */
  listen: {
    hostname: string;
    allowedHosts?: readonly string[];
    allowedOrigins?: readonly string[];
  };
  /** The accepted tokens; empty means no auth (nothing to throttle). */
  tokens: readonly string[];
  /** The failed-credential counter. @default a new AuthThrottle() */
  throttle?: AuthThrottle;
}

/** The door, shared by `host.fetch` and the listener. */
export interface Door {
  /**
   * Puts a handler behind the door.
   *
   * @param handler what a request that passes reaches
   * @returns the guarded handler
   */
  guard(handler: HttpHandler): HttpHandler;
  /**
   * Learns the address the host listens on (a wildcard adds the
   * machine's interface addresses).
   *
   * @param hostname the listen hostname
   */
  listeningOn(hostname: string): void;
  /**
   * Checks a token that came inside a message (an A2E handshake's), under
   * the same throttle as the door's credentials.
   *
   * @param client the client's key ({@link clientKey}); undefined when the
   *   session has no address (stdio, in-process): not throttled
   * @param token the token presented
   * @returns "" when accepted, else why not
   */
  checkToken(client: string | undefined, token: string): string;
}

/**
 * Creates the host's door.
 *
 * @param options the names, origins and tokens
 * @returns the door
 * @throws {TypeError} when an allowed host or origin is malformed
 * @example A rebinding page is refused before any route runs
 * ```ts
 * import { createDoor } from "./guard.ts";
 * import assert from "node:assert/strict";
 * const door = createDoor({ listen: { hostname: "127.0.0.1" }, tokens: [] });
 * const fetch = door.guard(() => new Response("served"));
 * const ok = await fetch(new Request("http://127.0.0.1:8787/health"));
 * assert.equal(await ok.text(), "served");
 * const evil = await fetch(new Request("http://a.evil:8787/health"));
 * assert.equal(evil.status, 403);
 * assert.match((await evil.json()).error, /listen\.allowed_hosts/);
 * ```
 */
export function createDoor(options: DoorOptions): Door {
  const names = new HostNames(options.listen);
  const tokens = options.tokens;
  const throttle = options.throttle ?? new AuthThrottle();
  // The last sign-in being judged, or waiting to be, from each network.
  const signIns = new Map<string, Promise<void>>();
  return {
    listeningOn: (hostname) => names.listeningOn(hostname),
    checkToken(client, token) {
      const wait = client === undefined ? 0 : throttle.retryAfter(client);
      if (wait > 0) return tooMany(wait);
      const accepted = isAcceptedToken(tokens, token);
      if (!accepted && client !== undefined) throttle.failed(client);
      return accepted ? "" : "Invalid auth token";
    },
    guard: (handler) => (request, info) => {
      const why = names.refusal(request);
      if (why !== undefined) return jsonError(403, why);
      if (tokens.length === 0) return handler(request, info);
      const authorization = request.headers.get("authorization");
      const login = isLogin(request);
      if (authorization === null && !login) return handler(request, info);
      const client = clientKey(info);
      if (authorization !== null) {
        const wait = throttle.retryAfter(client);
        if (wait > 0) return throttled(wait);
        if (bearerToken(authorization, tokens) === null) {
          throttle.failed(client);
        }
      }
      // The form's token is judged too, whatever bearer came with it.
      if (!login) return handler(request, info);
      return signIn(handler, request, info, client);
    },
  };

  // A sign-in is judged by its answer, once its form is read: one checked
  // meanwhile would not meet the failures of those before it, and a guesser
  // sending its guesses at once would have them all judged. So each takes
  // a turn of its network, but only once its whole form has come (the
  // handler sees the form's end only then): a client trickling a form
  // holds no one else's sign-in, as it did when the turn came first.
  async function signIn(
    handler: HttpHandler,
    request: Request,
    info: Deno.ServeHandlerInfo | undefined,
    client: string,
  ): Promise<Response> {
    const wait = throttle.retryAfter(client);
    if (wait > 0) return throttled(wait);
    let release: (() => void) | undefined;
    let answered = false;
    let refused: Response | undefined;
    const form = request.body?.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        async flush() {
          const turn = await takeTurn(signIns, widestNetwork(client));
          // Answered meanwhile (the handler gave up on the form): pass on.
          if (answered) return turn();
          release = turn;
          const wait = throttle.retryAfter(client);
          if (wait > 0) {
            refused = throttled(wait);
            throw new Error(tooMany(wait)); // fails the form's read
          }
        },
      }),
    );
    try {
      let response: Response;
      try {
        response = await handler(
          form ? new Request(request, { body: form }) : request,
          info,
        );
      } catch (error) {
        if (refused) return refused;
        throw error;
      }
      if (refused) return refused;
      // The form answers 401 to a wrong token, a redirect to a right one.
      if (response.status === 401) throttle.failed(client);
      return response;
    } finally {
      answered = true;
      release?.(); // counted first: the next one meets this failure
    }
  }
}

function throttled(seconds: number): Response {
  return jsonError(429, tooMany(seconds), { "Retry-After": String(seconds) });
}

function tooMany(seconds: number): string {
  return `Too many failed sign-in attempts from this address: try again in ${seconds} s`;
}

// Waits until the sign-ins before it from the same network are judged;
// resolves with the release that lets the next one go.
async function takeTurn(
  queue: Map<string, Promise<void>>,
  key: string,
): Promise<() => void> {
  const before = queue.get(key);
  const { promise: done, resolve: release } = Promise.withResolvers<void>();
  queue.set(key, done);
  done.then(() => {
    if (queue.get(key) === done) queue.delete(key);
  });
  await before;
  return release;
}

// A POST of the console's sign-in form, by the path the router matches
// ("/%6Cogin" and "/a/../login" reach the form too).
function isLogin(request: Request): boolean {
  return request.method === "POST" && getPath(request) === "/login";
}

/**
 * A JSON error response, `{ "error": message }`, never cached: every door's
 * refusal, and the MCP endpoint's own errors.
 *
 * @param status the HTTP status
 * @param message a sentence saying why
 * @param headers more headers
 * @returns the response
 * @example
 * ```ts
 * import { jsonError } from "./guard.ts";
 * import assert from "node:assert/strict";
 * const res = jsonError(404, "Unknown MCP session");
 * assert.equal(res.status, 404);
 * assert.deepEqual(await res.json(), { error: "Unknown MCP session" });
 * ```
 */
export function jsonError(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ error: message }), {
    status,
    headers: {
      "content-type": "application/json",
      "cache-control": "no-store",
      ...headers,
    },
  });
}
