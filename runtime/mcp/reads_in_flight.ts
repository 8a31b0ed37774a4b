/**
 * The skill, resource and prompt requests over MCP that a principal has in
 * flight (`limits.mcp_reads_per_token`). They run no tool, so no call quota
 * counts them, yet one `resources/read` of a 16 MiB skill file holds about
 * three times that in the host (the bytes, their text, the JSON answer)
 * until the client has read the answer: thirty such reads of a 15 MiB file
 * left unread grew a host's process by 0.8 to 1.1 GiB.
 *
 * A request counts from its arrival until the host has handed its answer's
 * last bytes to the socket (or the client went away): a POST whose answer
 * sits unread still holds its place. Past the bound a request is refused at
 * once with a JSON-RPC error (a retryable quota refusal, not a wait: the
 * places are held by answers nobody may ever read). The principal is the
 * token, across its sessions and connections; on a host without tokens
 * every client is one principal, as the token quotas and admission count
 * them (nothing tells a client from another).
 *
 * The bound is a count, not bytes: every such request's worst case is fixed
 * by the 16 MiB bound on a whole skill, so a count bounds memory; a byte
 * budget would need each answer's size before the work, which only a local
 * `resources/read` knows (not `skills/list`, `prompts/get` or an imported
 * server's file), and would still need a count for small requests.
 *
 * @module
 */

import type { Release } from "../slots.ts";
import { isPlainObject } from "../../protocol/json.ts";
import { SKILLS_METHODS } from "./skills_extension.ts";
import { isRequest } from "./http_session.ts";

/** The requests that count: they serve skill files, listings and prompts. */
export const BOUNDED_METHODS: ReadonlySet<string> = new Set([
  ...SKILLS_METHODS,
  "prompts/list",
  "prompts/get",
]);

/** Bytes handed to Deno's HTTP server at a time: see {@link ReadsInFlight.hold}. */
const SLICE_BYTES = 64 * 1024;

/**
 * The bounded requests of each principal in flight.
 *
 * @example The fifth read of a token is refused; another token's is not
 * ```ts
 * import { ReadsInFlight } from "./reads_in_flight.ts";
 * import assert from "node:assert/strict";
 * const reads = new ReadsInFlight(4);
 * const read = { jsonrpc: "2.0", id: 1, method: "resources/read", params: {} };
 * const held = [1, 2, 3, 4].map(() => reads.take(read, "a"));
 * assert.ok(held.every((h) => typeof h === "function"));
 * assert.ok(reads.take(read, "a") instanceof Response);
 * assert.ok(typeof reads.take(read, "b") === "function");
 * ```
 */
export class ReadsInFlight {
  readonly #limit: number;
  // Each principal's bounded requests in flight (none: not in the map).
  readonly #principals = new Map<string, number>();

  /**
   * @param limit bounded requests one principal may have in flight
   * @throws {RangeError} when `limit` is not a positive integer
   */
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(
        `Cannot bound MCP reads: limit "${limit}" is not a positive integer`,
      );
    }
    this.#limit = limit;
  }

  /**
   * Takes the places of the bounded requests in a POST's body.
   *
   * @param body the parsed body: one message or a batch
   * @param principal the token ("" without tokens)
   * @returns undefined when the body holds no bounded request (nothing to
   *   give back), the release of its places, or the refusal to answer with
   *   (its requests are not served)
   */
  take(body: unknown, principal: string): Release | Response | undefined {
    const bounded = (Array.isArray(body) ? body : [body]).filter(isBounded);
    if (bounded.length === 0) return undefined;
    const held = this.#principals.get(principal) ?? 0;
    // A batch takes all its places or none: nothing waits for a place.
    if (held + bounded.length > this.#limit) {
      return refusal(body, this.#refusedMessage(bounded[0]!.method, principal));
    }
    this.#principals.set(principal, held + bounded.length);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = this.#principals.get(principal)! - bounded.length;
      // A principal with nothing in flight is forgotten.
      if (left === 0) this.#principals.delete(principal);
      else this.#principals.set(principal, left);
    };
  }

  /**
   * The answer to hand out: its body ends `release` once its last bytes
   * were taken, or it was cancelled or failed. The body is handed out in
   * slices: Deno's server takes a chunk whole, however large, and asks
   * for the next only once the socket took the one before, so the end is
   * reached only when all but a socket's buffers were sent.
   *
   * @param response the answer of a POST whose places were taken
   * @param release gives the places back
   * @returns the response to send
   */
  hold(response: Response, release: Release): Response {
    const body = response.body;
    if (body === null) {
      release();
      return response;
    }
    // A Response is a ResponseInit: its status, text and headers carry over.
    return new Response(sliced(body, release), response);
  }

  #refusedMessage(method: string, principal: string): string {
    const whose = principal === ""
      ? "the quota of clients without a token"
      : "this token's quota";
    return `Cannot handle "${method}": ${whose} of ${this.#limit} skill, resource and prompt requests in flight is used up: an answer counts until its client has read it`;
  }
}

// A bounded request (with an id: notifications get no answer).
function isBounded(message: unknown): message is { method: string } {
  return isRequest(message) && BOUNDED_METHODS.has(message.method);
}

// Every request of the POST gets the refusal (a batch is refused whole).
function refusal(body: unknown, message: string): Response {
  const errors = (Array.isArray(body) ? body : [body])
    .filter((m) => isPlainObject(m) && m.id !== undefined && "method" in m)
    .map((m) => ({
      jsonrpc: "2.0",
      id: (m as { id: unknown }).id,
      error: {
        code: -32000,
        message,
        data: { quota: "mcp_reads_per_token", retryable: true },
      },
    }));
  return Response.json(Array.isArray(body) ? errors : errors[0]);
}

// `body` handed on in slices of at most SLICE_BYTES; `onEnd` once when it
// ended, failed or was cancelled.
function sliced(
  body: ReadableStream<Uint8Array>,
  onEnd: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let rest: Uint8Array = new Uint8Array(0);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        while (rest.byteLength === 0) {
          const next = await reader.read();
          if (next.done) {
            onEnd();
            return controller.close();
          }
          rest = next.value;
        }
      } catch (error) {
        onEnd();
        return controller.error(error);
      }
      controller.enqueue(rest.subarray(0, SLICE_BYTES));
      rest = rest.subarray(SLICE_BYTES);
    },
    cancel(reason) {
      onEnd();
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}
