/**
 * The egress broker: the host performs HTTP requests for sandbox code
 * (`ctx.fetch`). Each hop of a request is checked the same way: the URL's
 * host against every allow-list in scope, then every address the name
 * resolves to (in the host, `/etc/hosts` included) against the address
 * rules, and the connection goes to the address that was checked (no
 * second resolution). Operator secrets bound to a host are added only to
 * requests to that host, over `https:` unless the binding names `http://`
 * (a plain-`http:` request that would carry one is refused), and their
 * values are cut from what comes back.
 * The host builds its broker from the `egress` section of the config
 * ({@link brokerFromConfig}).
 *
 * {@link checkedFetch} is the one `fetch` the host uses for requests it
 * makes on someone else's behalf outside `ctx.fetch` (imported Streamable
 * HTTP MCP servers, LLM endpoints chosen by a client or a skill): every
 * hop is checked by the same rules, redirects are followed only within the
 * first URL's origin (so headers, the operator's or an API key, never
 * leave it), and responses stream (SSE included).
 *
 * @module
 */

import type http from "node:http";
import { isIP } from "node:net";
import { Readable } from "node:stream";
import { Buffer } from "node:buffer";
import { SkillboxError } from "../../protocol/errors.ts";
import type { FetchRequest, FetchResponse } from "../../protocol/egress.ts";
import type { EgressConfig } from "../config_schema.ts";
import {
  FairSlots,
  type Release,
  Semaphore,
  type SlotOwner,
} from "../slots.ts";
import {
  allowedByAll,
  HOP_HEADERS,
  hostMatches,
  hostOf,
  isPublicAddress,
  requestAt,
  resolveHost,
} from "./targets.ts";
import { indexOfText } from "../text_search.ts";

/**
 * An operator secret, sent as a header to one host only, and over `https:`
 * only unless the binding names `http://`: sandbox code chooses the URL's
 * scheme, and a secret sent over plain `http:` is readable on the path.
 */
export interface SecretBinding {
  /**
   * `name` or `name:port` the secret goes to, over `https:`; prefixed with
   * `http://`, over plain `http:` as well (`https://` changes nothing).
   */
  host: string;
  /** The header it is sent in (e.g. `Authorization`). */
  header: string;
  /** The value (read from the operator's environment). */
  value: string;
  /** Only calls of these toolkits get it; empty: any call allowed there. */
  toolkits?: string[];
}

/** Options for {@link EgressBroker}. */
export interface BrokerOptions {
  /** Secrets bound to hosts. @default [] */
  secrets?: SecretBinding[];
  /**
   * Hosts (`name` or `name:port`) the operator allows to resolve to
   * loopback, private or link-local addresses. @default []
   */
  privateHosts?: string[];
  /** Most response body bytes returned. @default 8388608 */
  maxResponseBytes?: number;
  /** Whole request limit, redirects included. @default 30000 */
  timeoutMs?: number;
  /**
   * Requests run at once for all calls: each holds up to
   * `maxResponseBytes` of answer in the host, so this bounds the host's
   * memory for them. Turns go to the token holding fewest, then to its
   * session holding fewest. @default 32
   */
  maxParallelHost?: number;
  /** Name resolution (tests swap it). @default {@link resolveHost} */
  resolve?: (host: string, signal: AbortSignal) => Promise<string[]>;
}

/** Who is asking, and where they may go. */
export interface EgressScope {
  /** Allow-lists that must all match each hop (policy, grant, config). */
  allow: string[][];
  /** The calling toolkit, for secrets bound to toolkits. @default null */
  toolkit?: string | null;
  /**
   * The calling session's secrets (its toolkit settings marked `secret`,
   * which the tool itself may send): cut from answers in every form an
   * operator's secret is, and a request holding one is sent as one
   * holding an operator's secret is (no re-encoding asked, an encoded
   * answer refused). @default []
   */
  hide?: readonly string[];
  signal?: AbortSignal;
  /**
   * Whose requests these are (one call): an owner runs at most
   * {@link MAX_PARALLEL_FETCHES} at once, the rest wait their turn.
   * @default each request is its own owner
   */
  owner?: object;
  /**
   * The session and token asking, for the host's turns
   * ({@link BrokerOptions.maxParallelHost}).
   * @default one session and token for every request
   */
  principal?: SlotOwner;
}

/**
 * Requests one owner (one call) runs at once. Each holds up to
 * `max_response_bytes` of answer in the host while it runs, so a module
 * that fires thousands at once would otherwise take the host's memory.
 *
 * @example One call's requests share an owner
 * ```ts
 * import { EgressBroker, MAX_PARALLEL_FETCHES } from "./broker.ts";
 * import assert from "node:assert/strict";
 * assert.equal(MAX_PARALLEL_FETCHES, 6);
 * const broker = new EgressBroker();
 * const call = {}; // e.g. the call's hooks
 * await assert.rejects(
 *   broker.fetch({ url: "http://10.0.0.1/" }, { allow: [["*"]], owner: call }),
 *   /not a public address/,
 * );
 * ```
 */
export const MAX_PARALLEL_FETCHES = 6;

// The principal of a request that names none.
const ANYONE: SlotOwner = { session: "", token: "" };

/**
 * The statuses whose `Location` a request follows, as fetch does.
 *
 * @example
 * ```ts
 * import { REDIRECTS } from "./broker.ts";
 * import assert from "node:assert/strict";
 * assert.ok(REDIRECTS.includes(307) && !REDIRECTS.includes(304));
 * ```
 */
export const REDIRECTS: readonly number[] = [301, 302, 303, 307, 308];

/**
 * Hops a request may take after the first: in {@link EgressBroker.fetch},
 * {@link checkedFetch} and the LLM providers' fetch.
 *
 * @example
 * ```ts
 * import { MAX_REDIRECTS } from "./broker.ts";
 * import assert from "node:assert/strict";
 * assert.equal(MAX_REDIRECTS, 5);
 * ```
 */
export const MAX_REDIRECTS = 5;
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
// Most request body bytes sent: the host holds a body whole while it is sent.
const MAX_REQUEST_BYTES = 8 * 1024 * 1024;
// Dropped when a redirect leaves the origin, as fetch does.
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];
// Not sent with an operator secret: an echo of it compressed, cut in
// slices or in another charset is not found in the answer to be cut out.
const RESHAPING_HEADERS = [
  "accept-encoding",
  "accept-charset",
  "range",
  "if-range",
];

/**
 * Performs requests for sandboxes under the operator's rules.
 *
 * @example Refuse a name that resolves to loopback
 * ```ts
 * import { EgressBroker } from "./broker.ts";
 * import assert from "node:assert/strict";
 * const broker = new EgressBroker({ resolve: () => Promise.resolve(["127.0.0.1"]) });
 * await assert.rejects(
 *   broker.fetch({ url: "http://rebound.example/" }, { allow: [["*"]] }),
 *   /not a public address/,
 * );
 * ```
 */
export class EgressBroker {
  readonly #secrets: BoundSecret[];
  readonly #privateHosts: string[];
  readonly #maxResponse: number;
  readonly #timeoutMs: number;
  readonly #resolve: (host: string, signal: AbortSignal) => Promise<string[]>;
  // Each owner's turns, dropped with the owner (its call).
  readonly #gates = new WeakMap<object, Semaphore>();
  // The host's turns, shared fairly by tokens, then by sessions.
  readonly #hostTurns: FairSlots;

  /** @param options secrets, private hosts, bounds */
  constructor(options: BrokerOptions = {}) {
    this.#secrets = (options.secrets ?? []).map(boundSecret);
    this.#privateHosts = [...(options.privateHosts ?? [])];
    this.#maxResponse = options.maxResponseBytes ?? 8 * 1024 * 1024;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#resolve = options.resolve ?? resolveHost;
    this.#hostTurns = new FairSlots(options.maxParallelHost ?? 32, {
      floors: false,
    });
  }

  /**
   * Performs one request, following redirects (each hop checked).
   *
   * @param request what sandbox code asked for
   * @param scope where it may go, and who it is
   * @returns the response, body bounded
   * @throws {SkillboxError} `tool_denied` for a refused host or address,
   * `tool_error` for a bad request or a failed connection, `timeout`
   */
  async fetch(
    request: FetchRequest,
    scope: EgressScope,
  ): Promise<FetchResponse> {
    const owner = scope.owner;
    const gate = owner === undefined ? undefined : this.#gates
      .getOrInsertComputed(owner, () => new Semaphore(MAX_PARALLEL_FETCHES));
    let release: Release | undefined;
    let host: Release;
    try {
      // One of the owner's turns, then one of the host's. An owner's turn
      // handed over as the signal aborts is given back here: the host's
      // turn refuses an aborted signal.
      release = await gate?.acquire(scope.signal);
      host = await this.#hostTurns.acquire(
        scope.principal ?? ANYONE,
        scope.signal,
      );
    } catch {
      release?.();
      throw new SkillboxError("tool_error", "Request was cancelled");
    }
    try {
      return await this.#fetch(request, scope);
    } finally {
      host();
      release?.();
    }
  }

  async #fetch(
    request: FetchRequest,
    scope: EgressScope,
  ): Promise<FetchResponse> {
    let method = (request.method ?? "GET").toUpperCase();
    if (!METHODS.includes(method)) {
      throw new SkillboxError(
        "tool_error",
        `Method "${method}" is not supported`,
      );
    }
    let body: Buffer | null = request.body === undefined ? null : Buffer.from(
      request.body,
      request.bodyEncoding === "base64" ? "base64" : "utf8",
    );
    if (body && body.length > MAX_REQUEST_BYTES) {
      throw new SkillboxError(
        "tool_error",
        `Request body is ${body.length} bytes: the limit is ${MAX_REQUEST_BYTES}`,
      );
    }
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = scope.signal
      ? AbortSignal.any([scope.signal, timeout])
      : timeout;
    const callerHeaders = cleanHeaders(request.headers ?? {});
    let url = parseUrl(request.url);
    const origin = url.origin;
    const redirects: string[] = [];
    // Every secret sent on any hop: cut from all that comes back. The
    // session's own are cut whether or not the request holds them.
    const hidden = (scope.hide ?? []).filter((v) => v !== "");
    const sent = new Set<string>(hidden);
    const holdsHidden = hidden.length > 0 &&
      [JSON.stringify(callerHeaders), body?.toString("latin1") ?? ""]
        .some((text) => hidden.some((v) => indexOfText(text, v) >= 0));
    for (let hop = 0;; hop++) {
      const address = await this.checkTarget(url, scope.allow, signal);
      const injected = this.#secretsFor(url, scope.toolkit ?? null);
      const guarded = injected.length > 0 || holdsHidden ||
        hidden.some((v) => indexOfText(url.href, v) >= 0);
      if (url.protocol === "http:" && injected.some((s) => !s.plainHttp)) {
        // Refused, not sent without it: the module learns why at once.
        throw new SkillboxError(
          "tool_denied",
          `Cannot send a request to "${url.origin}": an operator secret for it goes over https only (use https; the operator allows plain http by binding it to "http://${url.host}")`,
        );
      }
      for (const s of injected) if (s.value) sent.add(s.value);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(callerHeaders)) {
        if (url.origin !== origin && CREDENTIAL_HEADERS.includes(k)) continue;
        if (guarded && RESHAPING_HEADERS.includes(k)) continue;
        headers[k] = v;
      }
      // Operator secrets win over whatever sandbox code set in their place.
      for (const s of injected) headers[s.header.toLowerCase()] = s.value;
      const res = await requestAt(url, address, {
        method,
        headers,
        body,
        signal,
      }).catch((err: Error) => {
        if (timeout.aborted) throw timeoutError(signal);
        if (signal.aborted) {
          throw new SkillboxError("tool_error", "Request was cancelled");
        }
        throw new SkillboxError(
          "tool_error",
          `Request to "${url.host}" failed: ${err.message}`,
        );
      });
      const location = res.headers.location;
      const status = res.statusCode ?? 0;
      const cut = secretCut(sent);
      if (
        request.redirect === "manual" || location === undefined ||
        !REDIRECTS.includes(status)
      ) {
        if (guarded) refuseEncoded(url, res);
        return this.#answer(url, res, cut, redirects);
      }
      res.destroy();
      if (hop >= MAX_REDIRECTS) {
        throw new SkillboxError(
          "tool_error",
          `Too many redirects (more than ${MAX_REDIRECTS})`,
        );
      }
      const from = cut.whole(url.href);
      let next: URL;
      try {
        next = parseUrl(URL.parse(location, url)?.href ?? "");
      } catch {
        // The Location is the upstream's text, which may hold a secret it
        // was sent: not quoted.
        throw new SkillboxError(
          "tool_error",
          `Cannot follow the redirect from "${from}": its Location is not an http(s) URL without credentials`,
        );
      }
      // An upstream that copies its credential into the Location would
      // send it, in the URL, to a host it is not bound to. In any case: a
      // URL writes its host in lower case.
      const bound = this.#secretsFor(next, scope.toolkit ?? null)
        .map((s) => s.value);
      const href = next.href.toLowerCase();
      const carried = [...sent].some((v) =>
        !bound.includes(v) &&
        secretForms([v]).some((form) => href.includes(form.toLowerCase()))
      );
      if (carried) {
        throw new SkillboxError(
          "tool_denied",
          `Cannot follow the redirect from "${from}": its URL carries an operator secret for another host`,
        );
      }
      redirects.push(from);
      url = next;
      if (becomesGet(status, method)) {
        method = "GET";
        body = null;
        // It described the body just dropped, as fetch drops it.
        delete callerHeaders["content-type"];
      }
    }
  }

  /**
   * Checks one hop: the URL's host against every allow-list, then every
   * address its name resolves to (in the host) against the address rules.
   * The egress proxy checks its targets with this too.
   *
   * @param url the target (its host and port are what is checked)
   * @param allow allow-lists that must all match
   * @param signal gives up resolving when aborted
   * @returns the checked address to connect to (never resolve again)
   * @throws {SkillboxError} `tool_denied` for a refused host or address,
   * `tool_error` when the name does not resolve
   * @example An address literal in a private range
   * ```ts
   * import { EgressBroker } from "./broker.ts";
   * import assert from "node:assert/strict";
   * const broker = new EgressBroker();
   * await assert.rejects(
   *   broker.checkTarget(new URL("http://10.0.0.1/"), [["*"]], AbortSignal.timeout(1000)),
   *   /not a public address/,
   * );
   * ```
   */
  async checkTarget(
    url: URL,
    allow: string[][],
    signal: AbortSignal,
  ): Promise<string> {
    if (!allowedByAll(url, allow)) {
      throw new SkillboxError(
        "tool_denied",
        `Host "${url.host}" is not allowed for this call`,
      );
    }
    const host = hostOf(url);
    // A URL writes an address literal in one canonical form.
    const addresses = isIP(host)
      ? [host]
      : await this.#resolve(host, signal).catch((err: Error) => {
        if (signal.aborted) throw timeoutError(signal);
        throw new SkillboxError(
          "tool_error",
          `Cannot resolve "${host}": ${err.message}`,
        );
      });
    if (addresses.length === 0) {
      throw new SkillboxError("tool_error", `Cannot resolve "${host}"`);
    }
    const privateOk = this.#privateHosts.some((e) => hostMatches(url, e));
    // Every address is checked, not only the one used: a name that mixes
    // public and private answers is refused as a whole.
    const bad = privateOk
      ? undefined
      : addresses.find((a) => !isPublicAddress(a));
    if (bad !== undefined) {
      throw new SkillboxError(
        "tool_denied",
        `Host "${host}" resolves to ${bad}, which is not a public address (the operator can allow it in egress.allow_private_hosts)`,
      );
    }
    return addresses[0]!;
  }

  #secretsFor(url: URL, toolkit: string | null): BoundSecret[] {
    return this.#secrets.filter((s) =>
      hostMatches(url, s.target) &&
      (!s.toolkits?.length ||
        (toolkit !== null && s.toolkits.includes(toolkit)))
    );
  }

  /** Reads a bounded body and cuts injected secrets out of the answer. */
  async #answer(
    url: URL,
    res: http.IncomingMessage,
    cut: SecretCut,
    redirects: string[],
  ): Promise<FetchResponse> {
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    try {
      for await (const chunk of res as AsyncIterable<Buffer>) {
        const room = this.#maxResponse - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          truncated = true;
          break;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
    } finally {
      res.destroy();
    }
    let body = cut.whole(Buffer.concat(chunks).toString("latin1"));
    // A secret the cut ran through is not found whole: drop its start.
    if (truncated) body = cut.end(body);
    // Header names arrive lower-cased: one that carries a secret in any
    // case cannot be cut, so it is dropped.
    const lowered = cut.forms.map((v) => v.toLowerCase());
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined || lowered.some((l) => k.includes(l))) continue;
      headers[k] = cut.whole(Array.isArray(v) ? v.join(", ") : v);
    }
    return {
      url: cut.whole(url.href),
      status: res.statusCode ?? 0,
      // The reason phrase is the upstream's text too.
      statusText: cut.whole(res.statusMessage ?? ""),
      headers,
      bodyBase64: Buffer.from(body, "latin1").toString("base64"),
      truncated,
      redirects,
    };
  }
}

// A binding as the broker matches it: its host entry without the scheme.
interface BoundSecret extends SecretBinding {
  target: string;
  plainHttp: boolean;
}

function boundSecret(binding: SecretBinding): BoundSecret {
  const m = /^(https?):\/\/([^/]*)\/?$/i.exec(binding.host.trim());
  return {
    ...binding,
    target: m ? m[2]! : binding.host,
    plainHttp: m !== null && m[1]!.toLowerCase() === "http",
  };
}

// What Node's HTTP client lets into a header value: a header is bytes, so
// a character past U+00FF fails every request to the host, and a line break
// would start a header of its own.
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * The broker for a host configuration.
 *
 * @param config the `egress` section
 * @param env where secret values are read @default Deno.env.get
 * @returns the broker
 * @throws {TypeError} when a secret's variable is not set or holds what no
 * header can carry (a start-up error: the operator named it)
 * @example
 * ```ts
 * import { brokerFromConfig } from "./broker.ts";
 * import assert from "node:assert/strict";
 * const broker = brokerFromConfig({
 *   allowPrivateHosts: [],
 *   secrets: [{ host: "api.example.com", header: "Authorization", valueEnv: "TOKEN", toolkits: [] }],
 *   maxResponseBytes: 1024,
 *   timeoutSeconds: 5,
 * }, (name) => name === "TOKEN" ? "Bearer x" : undefined);
 * assert.ok(broker);
 * ```
 */
export function brokerFromConfig(
  config: EgressConfig,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): EgressBroker {
  const secrets = config.secrets.map((s, i) => {
    const value = env(s.valueEnv);
    if (value === undefined || value === "") {
      throw new TypeError(
        `egress.secrets.${i}: the environment variable "${s.valueEnv}" is not set`,
      );
    }
    if (!HEADER_VALUE.test(value)) {
      throw new TypeError(
        `egress.secrets.${i}: the value of "${s.valueEnv}" cannot be sent in a header: it holds a character past U+00FF or a control character`,
      );
    }
    return { ...s, value };
  });
  return new EgressBroker({
    secrets,
    privateHosts: config.allowPrivateHosts,
    maxResponseBytes: config.maxResponseBytes,
    timeoutMs: config.timeoutSeconds * 1000,
    maxParallelHost: config.maxParallelHost,
  });
}

// The host's own requests under the broker's rules.

/** What the SDK's client transport takes as `fetch`. */
export type FetchLike = (
  url: string | URL,
  init?: RequestInit,
) => Promise<Response>;

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
  /**
   * Whole-request bound: from the call until the response body ends,
   * redirects included; past it the request is aborted (a server that
   * trickles its headers or its body holds a connection no longer). The
   * caller's own signal may end it sooner. @default 600000
   */
  timeoutMs?: number;
}

// As long as the LLM SDKs wait for a request by default.
const REQUEST_TIMEOUT_MS = 600_000;

/**
 * A `fetch` to one origin only, under the broker's rules.
 *
 * @param broker checks each hop's host and addresses
 * @param options the origin to stay on, and the allow-lists
 * @returns the fetch
 * @example A name that resolves to loopback is refused
 * ```ts
 * import { checkedFetch, EgressBroker } from "./broker.ts";
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
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  return async (input, init = {}) => {
    let url = new URL(String(input));
    // Callers' signals may never abort (the MCP SDK's lasts as long as
    // its transport): this clock is the request's own, stopped at the end.
    const clock = new AbortController();
    const timer = setTimeout(() => {
      clock.abort(
        new SkillboxError(
          "timeout",
          `Request to "${url.origin}" timed out after ${timeoutMs / 1000} s`,
        ),
      );
    }, timeoutMs);
    const whole = init.signal
      ? AbortSignal.any([init.signal, clock.signal])
      : clock.signal;
    try {
      let method = (init.method ?? "GET").toUpperCase();
      const headers = new Headers(init.headers);
      let body = init.body === undefined || init.body === null
        ? null
        : new Uint8Array(await new Response(init.body).arrayBuffer());
      // Each hop checked, on the origin, until the last hop's headers.
      for (let hop = 0;; hop++) {
        if (url.origin !== origin.origin) {
          throw new TypeError(
            `Refusing to send a request to "${url.origin}": the server is "${origin.origin}"`,
          );
        }
        const signal = AbortSignal.any([
          whole,
          AbortSignal.timeout(CHECK_TIMEOUT_MS),
        ]);
        const address = await broker.checkTarget(url, allow, signal);
        const res = await requestAt(url, address, {
          method,
          headers: Object.fromEntries(headers),
          body,
          signal: whole,
        });
        const location = res.headers.location;
        const status = res.statusCode ?? 0;
        if (location === undefined || !REDIRECTS.includes(status)) {
          if (res.closed) clearTimeout(timer);
          else res.once("close", () => clearTimeout(timer));
          return toResponse(res, method);
        }
        res.destroy();
        if (hop >= MAX_REDIRECTS) {
          throw new TypeError(
            `Too many redirects (more than ${MAX_REDIRECTS})`,
          );
        }
        url = new URL(location, url);
        if (becomesGet(status, method)) {
          method = "GET";
          body = null;
          headers.delete("content-type");
        }
      }
    } catch (error) {
      clearTimeout(timer);
      if (clock.signal.aborted) throw clock.signal.reason;
      throw error;
    }
  };
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

/**
 * Whether a redirect turns the request into a GET without a body, as
 * fetch does: a 303 answering anything but a GET or a HEAD, or a 301 or
 * 302 answering a POST.
 *
 * @param status the redirect's status
 * @param method the request's method, upper case
 * @returns true when the next hop is a GET without a body
 * @example
 * ```ts
 * import { becomesGet } from "./broker.ts";
 * import assert from "node:assert/strict";
 * assert.equal(becomesGet(302, "POST"), true);
 * assert.equal(becomesGet(307, "POST"), false);
 * assert.equal(becomesGet(303, "PUT"), true);
 * assert.equal(becomesGet(303, "HEAD"), false);
 * ```
 */
export function becomesGet(status: number, method: string): boolean {
  return status === 303
    ? method !== "GET" && method !== "HEAD"
    : (status === 301 || status === 302) && method === "POST";
}

// What crosses the broker: URLs and headers from sandbox code checked
// before use, and operator secrets cut from answers.

// The broker frames the body it sends itself (requestAt).
const BODY_FRAMING = ["content-length", "transfer-encoding"];
const REDACTED = "[REDACTED]";

/** An absolute http(s) URL without credentials, or a `tool_error`. */
function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SkillboxError("tool_error", `"${text}" is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new SkillboxError(
      "tool_error",
      `Only http and https URLs are supported, got "${url.protocol}"`,
    );
  }
  if (url.username || url.password) {
    throw new SkillboxError(
      "tool_error",
      "Credentials in the URL are not supported: use headers",
    );
  }
  return url;
}

/** Sandbox headers, lower-cased, without hop-by-hop ones; refuses line breaks. */
function cleanHeaders(
  raw: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    const name = k.toLowerCase();
    if (HOP_HEADERS.has(name) || BODY_FRAMING.includes(name)) continue;
    if (typeof v !== "string") continue;
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name) || /[\r\n\0]/.test(v)) {
      throw new SkillboxError("tool_error", `Header "${k}" is not valid`);
    }
    out[name] = v;
  }
  return out;
}

/**
 * Refuses an answer to a request that carried a secret (an operator's or
 * the session's) when it comes encoded although none was asked for: the
 * secret would not be found in it to be cut.
 */
function refuseEncoded(url: URL, res: http.IncomingMessage): void {
  const coding = res.headers["content-encoding"]?.trim().toLowerCase();
  if (!coding || coding === "identity") return;
  res.destroy();
  throw new SkillboxError(
    "tool_error",
    `Cannot read the answer from "${url.host}": it came encoded ("${coding}") unasked, and a secret sent with the request could not be cut from it`,
  );
}

/** The error for an aborted request: `timeout` when the broker's own clock ran out. */
function timeoutError(signal: AbortSignal): SkillboxError {
  return signal.reason instanceof DOMException &&
      signal.reason.name === "TimeoutError"
    ? new SkillboxError("timeout", "Request timed out")
    : new SkillboxError("tool_error", "Request was cancelled");
}

/**
 * The forms a secret may take in what comes back: as sent, as a URL writes
 * it (an upstream copying it into a Location or a link) or a form does
 * (a space as "+"), their hex digits in either case (.NET's encoder writes
 * them in lower case), and as a JSON string writes it, with "/" as "\/"
 * too (PHP's json_encode; base64 keys hold "/"). Longest first: a value
 * that begins another would otherwise be cut out first and leave the rest
 * of the longer one in the clear.
 */
function secretForms(values: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const v of values) {
    const json = JSON.stringify(v).slice(1, -1);
    forms.add(v).add(json).add(json.replaceAll("/", "\\/"));
    const form = new URLSearchParams({ v }).toString().slice(2);
    for (const url of [encodeURIComponent(v), form]) {
      forms.add(url).add(url.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()));
    }
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** Cuts the secrets sent from text read one character per byte (latin1). */
interface SecretCut {
  /** The forms of the secrets ({@link secretForms}). */
  forms: string[];
  /** The text with every form replaced by a marker. */
  whole(text: string): string;
  /** A text cut at a limit without the start of a form at its end. */
  end(text: string): string;
}

/**
 * Cuts each form of the secrets as written, and with any of its characters
 * written another way (see {@link readings}): an HTML character reference
 * (`&#x2F;`, `&#47;`, `&sol;`, the ";" optional as browsers read them), as a
 * page that shows the request it got escapes it, an escape, or its UTF-8
 * bytes. The text is read once, and each form looked for in one pass over
 * it (see {@link findForm}): whatever the secret's shape, the time grows
 * with the text, not with the text times the secret.
 */
function secretCut(values: Iterable<string>): SecretCut {
  const forms = secretForms(values);
  if (forms.length === 0) return { forms, whole: (t) => t, end: (t) => t };
  const patterns = forms.map(formPattern);
  // Enough of a text's end for the longest form, every character escaped,
  // leaving out zeros (a reference may be padded with any number of them).
  const reach = forms[0]!.length * 24;
  return {
    forms,
    whole(text) {
      const read = readings(text);
      const spans: number[] = [];
      for (const p of patterns) {
        findForm(read, p, (from, to) => spans.push(from, to));
      }
      return redact(text, spans);
    },
    end(text) {
      let from = text.length;
      for (let left = reach; from > 0 && left > 0; from--) {
        if (text[from - 1] !== "0") left--;
      }
      // A writing the cut ran through may be a form's next character.
      const tail = text.slice(from).replace(PARTIAL, "");
      const read = readings(tail);
      // The first place from which the tail's end is a form's start.
      let begun = tail.length;
      for (const p of patterns) {
        for (const head of findForm(read, p, () => {})) {
          if (head.h > 0) begun = Math.min(begun, startOf(head, tail.length));
        }
      }
      return text.slice(0, from + begun);
    },
  };
}

// The text with each span (pairs of from, to) replaced by the marker;
// overlapping spans are cut as one, as far as the furthest reaches.
function redact(text: string, spans: number[]): string {
  if (spans.length === 0) return text;
  const order = Array.from({ length: spans.length / 2 }, (_, i) => i)
    .sort((a, b) => spans[2 * a]! - spans[2 * b]!);
  let out = "";
  let at = 0;
  for (const i of order) {
    const from = spans[2 * i]!;
    const to = spans[2 * i + 1]!;
    if (to <= at) continue;
    if (from < at) {
      // Overlaps the last cut: it reaches further.
      at = to;
      continue;
    }
    out += text.slice(at, from) + REDACTED;
    at = to;
  }
  return out + text.slice(at);
}

// The start of a writing (see readings) at a text's end: a reference, a
// "\u" or "\x" escape, a character's first UTF-8 bytes, or "\x" escapes of
// them.
const PARTIAL =
  /(?:&#?[0-9A-Za-z]*|\\(?:u[0-9A-Fa-f]{0,3}|x[0-9A-Fa-f]?)?|[\xc2-\xf4][\x80-\xbf]{0,2}|\\x[c-fC-F][0-9A-Fa-f](?:\\x[89abAB][0-9A-Fa-f]){0,2}(?:\\(?:x[0-9A-Fa-f]?)?)?)$/;

// HTML's names for ASCII characters (the WHATWG list), as "&name" and the
// character.
const NAMED: [string, number][] = [
  '\tTab \nNewLine !excl "quot "QUOT #num $dollar %percnt &amp &AMP',
  "'apos (lpar )rpar *ast *midast +plus ,comma .period /sol :colon ;semi",
  "<lt <LT =equals >gt >GT ?quest @commat [lsqb [lbrack \\bsol ]rsqb",
  "]rbrack ^Hat _lowbar _UnderBar `grave `DiacriticalGrave {lcub {lbrace",
  "|verbar |vert |VerticalLine }rcub }rbrace",
].join(" ").split(" ").map((e) => [`&${e.slice(1)}`, e.charCodeAt(0)]);

// A header value goes out in latin1, and WHATWG's "latin1" is
// windows-1252: an upstream decoding by it reads a byte 0x80-0x9f as
// another character (0x80 as "€"). A character is compared by its reading
// (0x80 and "€" alike, a little more cut than needed), and a lone surrogate
// as the U+FFFD its UTF-8 bytes are.
const WINDOWS_1252 = Array.from(
  new TextDecoder("windows-1252").decode(
    Uint8Array.from({ length: 32 }, (_, i) => 0x80 + i),
  ),
  (c) => c.codePointAt(0)!,
);
function reading(code: number): number {
  if (code >= 0x80 && code <= 0x9f) return WINDOWS_1252[code - 0x80]!;
  return code >= 0xd800 && code <= 0xdfff ? 0xfffd : code;
}

/**
 * A text read every way an upstream may have written a character: each
 * place reads as its own character (Node sends a header value in latin1),
 * and places where a writing of one begins read, too, as that character up
 * to the writing's end: its UTF-8 bytes, a JSON "\u" escape, "\x" escapes
 * of its latin1 byte (JavaScript) or of its UTF-8 bytes (Python's bytes),
 * an HTML reference by decimal or hexadecimal number (any leading zeros) or
 * by name, with or without its ";". The readings of one place differ in
 * length: "&#979" is "&" or "a" then "9" or "ϓ".
 */
interface Readings {
  /** The text, one character a place. */
  text: string;
  /** Writings as [from, to, character read], by `from`. */
  writings: number[];
}

function readings(text: string): Readings {
  const writings: number[] = [];
  const add = (from: number, to: number, code: number) =>
    writings.push(from, to, reading(code));
  // A reference's ";" is optional.
  const reference = (from: number, to: number, code: number) => {
    add(from, to, code);
    if (text[to] === ";") add(from, to + 1, code);
  };
  const starts = /[&\\\xc2-\xf4]/g;
  for (let m; (m = starts.exec(text)) !== null;) {
    const at = m.index;
    if (text[at] === "&") {
      if (text[at + 1] === "#") {
        const hex = text[at + 2] === "x" || text[at + 2] === "X";
        const base = hex ? 16 : 10;
        const digits = at + (hex ? 3 : 2);
        let zeros = digits;
        while (text[zeros] === "0") zeros++;
        // "&#000": the number 0 ends at any of its zeros.
        for (let end = digits + 1; end <= zeros; end++) reference(at, end, 0);
        let code = 0;
        for (let end = zeros; end < text.length; end++) {
          const digit = parseInt(text[end]!, base);
          if (Number.isNaN(digit)) break;
          code = code * base + digit;
          if (code > 0x10ffff) break;
          // "&#979": 9, 97 or 979, the rest read on.
          reference(at, end + 1, code);
        }
      }
      for (const [name, code] of NAMED) {
        if (text.startsWith(name, at)) reference(at, at + name.length, code);
      }
    } else if (text[at] === "\\") {
      const byteAt = (i: number) =>
        text[at + 4 * i + 1] === "x" && text[at + 4 * i] === "\\"
          ? hexAt(text, at + 4 * i + 2, 2)
          : -1;
      const byte = byteAt(0);
      if (byte >= 0) add(at, at + 4, byte);
      const utf8 = utf8At(byteAt);
      if (utf8) add(at, at + 4 * utf8[1], utf8[0]);
      const unit = text[at + 1] === "u" ? hexAt(text, at + 2, 4) : -1;
      if (unit >= 0) add(at, at + 6, unit);
    } else {
      const utf8 = utf8At((i) => text.charCodeAt(at + i));
      if (utf8) add(at, at + utf8[1], utf8[0]);
    }
  }
  return { text, writings };
}

// The number written in `digits` hex digits at `at`, or -1.
function hexAt(text: string, at: number, digits: number): number {
  const hex = text.slice(at, at + digits);
  return hex.length === digits && /^[0-9A-Fa-f]+$/.test(hex)
    ? parseInt(hex, 16)
    : -1;
}

// The character whose UTF-8 bytes are byteAt(0), byteAt(1)... and their
// count; none for bytes no encoder writes (overlong, a surrogate).
function utf8At(byteAt: (i: number) => number): [number, number] | null {
  const first = byteAt(0);
  const n = first >= 0xc2 && first <= 0xdf
    ? 2
    : first >= 0xe0 && first <= 0xef
    ? 3
    : first >= 0xf0 && first <= 0xf4
    ? 4
    : 0;
  if (n === 0) return null;
  let code = first & (0xff >> (n + 1));
  for (let i = 1; i < n; i++) {
    const byte = byteAt(i);
    if ((byte & 0xc0) !== 0x80) return null;
    code = (code << 6) | (byte & 0x3f);
  }
  const least = n === 2 ? 0x80 : n === 3 ? 0x800 : 0x10000;
  if (code < least || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
    return null;
  }
  return [code, n];
}

// A form as compared (see reading), with each prefix's longest border.
interface FormPattern {
  chars: Int32Array;
  border: Int32Array;
}

function formPattern(form: string): FormPattern {
  const chars = Int32Array.from(
    Array.from(form, (c) => reading(c.codePointAt(0)!)),
  );
  const border = new Int32Array(chars.length + 1);
  for (let i = 1, k = 0; i < chars.length; i++) {
    while (k > 0 && chars[i] !== chars[k]) k = border[k]!;
    if (chars[i] === chars[k]) k++;
    border[i + 1] = k;
  }
  return { chars, border };
}

/**
 * One way of reading the text so far that ends in the start of a form:
 * its `h` first characters, read from the last `h` readings taken. The
 * readings longer than one place it holds are kept, to find where it
 * begins.
 */
interface Head {
  h: number;
  /** The number of readings taken, and of the first one it holds. */
  taken: number;
  first: number;
  /** [number, extra places] of each longer reading held, from `lo`. */
  long: number[];
  lo: number;
  /** The extra places of the longer readings held. */
  extra: number;
}

function startOf(head: Head, at: number): number {
  return at - head.h - head.extra;
}

/**
 * Finds each form's places in a text read every way (Knuth–Morris–Pratt
 * over the readings): each way of reading that matches the start of the
 * form goes on, falling back to the longest start it ends in on a
 * mismatch, so no place is compared again from each place before it.
 * Readings that reach one place with the same start held are one; text
 * with no writing but its own characters is read one way.
 *
 * @param found called with each match's first place and its end
 * @returns the heads at the text's end
 */
function findForm(
  read: Readings,
  pattern: FormPattern,
  found: (from: number, to: number) => void,
): Head[] {
  const { text, writings } = read;
  const { chars, border } = pattern;
  const m = chars.length;
  // Heads reaching a place past the next one.
  const later = new Map<number, Head[]>();
  let heads: Head[] = [{ h: 0, taken: 0, first: 0, long: [], lo: 0, extra: 0 }];
  let w = 0;
  // One head takes a reading of `length` places, ending at `to`.
  const take = (head: Head, code: number, length: number, to: number) => {
    let h = head.h;
    while (h > 0 && chars[h] !== code) h = border[h]!;
    if (chars[h] === code) {
      drop(head, head.h - h);
      head.h = h + 1;
      if (length > 1) {
        head.long.push(head.taken, length - 1);
        head.extra += length - 1;
      }
      head.taken++;
      if (head.h === m) {
        found(startOf(head, to), to);
        drop(head, m - border[m]!);
        head.h = border[m]!;
      }
    } else {
      // Nothing held: the reading is not part of the form.
      drop(head, head.h);
      head.h = 0;
    }
  };
  const held = new Set(chars);
  // The places where the form's first character is written as itself.
  const firsts = [...LATIN1].filter((c) => reading(c) === chars[0])
    .map((c) => ({ char: String.fromCharCode(c), at: -1 }));
  for (let at = 0;; at++) {
    if (later.size === 0 && heads.length === 1 && heads[0]!.h === 0) {
      // Nothing begun: on to where the form may begin.
      let to = text.length;
      for (const first of firsts) {
        if (first.at < at) {
          first.at = text.indexOf(first.char, at);
          if (first.at < 0) first.at = text.length;
        }
        to = Math.min(to, first.at);
      }
      // Writings of other characters before it begin nothing either.
      while (w < writings.length && writings[w]! < to) {
        if (writings[w + 2] === chars[0]) break;
        w += 3;
      }
      at = w < writings.length ? Math.min(to, writings[w]!) : to;
    }
    const arrived = later.size ? later.get(at) : undefined;
    if (arrived) {
      later.delete(at);
      heads = one(heads.concat(arrived), at);
    }
    if (at === text.length) return heads;
    const next: Head[] = [];
    // Writings beginning here: each head also reads on through each.
    for (; w < writings.length && writings[w] === at; w += 3) {
      // A character the form does not hold begins nothing.
      if (!held.has(writings[w + 2]!)) continue;
      const to = writings[w + 1]!;
      const moved = heads.map((h) => ({
        ...h,
        long: h.long.slice(h.lo),
        lo: 0,
      }));
      for (const head of moved) take(head, writings[w + 2]!, to - at, to);
      if (to === at + 1) next.push(...moved);
      else later.set(to, (later.get(to) ?? []).concat(moved));
    }
    const code = text.charCodeAt(at);
    for (const head of heads) {
      take(head, code < 0x80 ? code : reading(code), 1, at + 1);
    }
    heads = next.length ? one(heads.concat(next), at + 1) : heads;
  }
}

const LATIN1 = Array.from({ length: 256 }, (_, c) => c);

// Drops a head's first `count` readings.
function drop(head: Head, count: number): void {
  head.first += count;
  const { long } = head;
  while (head.lo < long.length && long[head.lo]! < head.first) {
    head.extra -= long[head.lo + 1]!;
    head.lo += 2;
  }
  if (head.lo > 64 && head.lo * 2 > long.length) {
    head.long = long.slice(head.lo);
    head.lo = 0;
  }
}

// The heads at a place, one for each length read: the one that begins
// first (it cuts the most).
function one(heads: Head[], at: number): Head[] {
  if (heads.length < 2) return heads;
  const byLength = new Map<number, Head>();
  for (const head of heads) {
    const kept = byLength.get(head.h);
    if (!kept || startOf(head, at) < startOf(kept, at)) {
      byLength.set(head.h, head);
    }
  }
  return [...byLength.values()];
}
