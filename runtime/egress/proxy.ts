/**
 * The egress proxy: the host side of a confined process's network. The
 * process has no network of its own; its `fetch` goes through a relay in
 * its namespace to this proxy, on a Unix socket made for that one process
 * (its principal and grant), bound into its namespace and nowhere else.
 * The proxy checks every request exactly as the broker checks `ctx.fetch`
 * ({@link EgressBroker.checkTarget}): the host against the grant, every
 * address the name resolves to in the host against the address rules, and
 * it connects to the address it checked. It never injects operator secrets.
 *
 * It speaks HTTP forward-proxy: absolute-form `http://` requests (one per
 * connection, re-framed, `Host` must name the target) and `CONNECT
 * host:port` tunnels (for TLS: the tunnel reaches only the checked address,
 * what flows inside is the client's own). HTTP is read by `node:http`
 * (llhttp, strict: two lengths, a length with a coding, bare CR or LF,
 * malformed chunks are refused before any handler runs); a plain `node:net`
 * server in front reads the token line, then hands the rest of the
 * connection to it.
 *
 * @module
 */

import http from "node:http";
import net from "node:net";
import { once } from "node:events";
import { Buffer } from "node:buffer";
import { SkillboxError } from "../../protocol/errors.ts";
import type { EgressBroker } from "./broker.ts";
import { HOP_HEADERS, pinnedLookup } from "./targets.ts";
import { privateSocketPath } from "../private_sockets.ts";

/** Options of {@link openEgressProxy}. */
export interface EgressProxyOptions {
  /** The broker whose rules apply (private hosts, name resolution). */
  broker: Pick<EgressBroker, "checkTarget">;
  /** Hosts the principal may reach (`name`, `name:port`, `*`). */
  allow: readonly string[];
  /** Time to send the token and a complete head, and to connect. @default 10000 */
  timeoutMs?: number;
}

/** One open proxy socket. */
export interface EgressProxy {
  /** The socket's path in the host (bind it into the namespace). */
  readonly path: string;
  /** The line each connection must start with (the relay sends it). */
  readonly token: string;
  /** Stops listening, ends open connections, removes the socket. */
  close(): void;
}

const MAX_HEAD = 64 * 1024;
const MAX_CONNECTIONS = 64; // open at once, per proxy
const MAX_TOKEN_LINE = 256;
// Requests parsed behind a connection's one before it is ended.
const MAX_BEHIND = 8;

/** A malformed or refused request: answered 400. */
class BadRequest extends Error {}

interface Rules {
  broker: Pick<EgressBroker, "checkTarget">;
  allow: string[][];
  timeoutMs: number;
}

/**
 * Opens a proxy socket for one principal. Synchronous: the socket exists
 * when this returns, so a process can be started against it at once; when
 * it cannot be made, this throws.
 *
 * @param options the broker, the principal's hosts, bounds
 * @returns the socket's path and token, and `close`
 * @example Refuses a host outside the grant
 * ```ts
 * import { openEgressProxy } from "./proxy.ts";
 * import { EgressBroker } from "./broker.ts";
 * import assert from "node:assert/strict";
 * const proxy = openEgressProxy({ broker: new EgressBroker(), allow: ["a.example"] });
 * const conn = await Deno.connect({ transport: "unix", path: proxy.path });
 * await conn.write(new TextEncoder().encode(
 *   `${proxy.token}\nGET http://b.example/ HTTP/1.1\r\nHost: b.example\r\n\r\n`,
 * ));
 * const buf = new Uint8Array(512);
 * const n = await conn.read(buf);
 * assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1.1 403/);
 * conn.close();
 * proxy.close();
 * ```
 */
export function openEgressProxy(options: EgressProxyOptions): EgressProxy {
  const path = privateSocketPath();
  const token = crypto.getRandomValues(Buffer.alloc(24)).toString("hex");
  const rules: Rules = {
    broker: options.broker,
    allow: [[...options.allow]],
    timeoutMs: options.timeoutMs ?? 10_000,
  };
  const sockets = new Set<net.Socket>();
  // Until its head is read, each connection is on a clock: a slow client
  // cannot hold a slot. Its one request taken, the clock is gone: anything
  // parsed after it on the same connection is never answered nor sent on.
  // The server holds each request it parsed until the connection ends, so
  // one with more than a few behind its first is ended.
  const clocks = new WeakMap<net.Socket, ReturnType<typeof setTimeout>>();
  const behind = new WeakMap<net.Socket, number>();
  const take = (socket: net.Socket): boolean => {
    clearTimeout(clocks.get(socket));
    if (clocks.delete(socket)) return true;
    const count = (behind.get(socket) ?? 0) + 1;
    behind.set(socket, count);
    if (count > MAX_BEHIND) socket.destroy();
    return false;
  };
  const server = http.createServer({
    maxHeaderSize: MAX_HEAD,
    // The absolute URL names the target; a Host header, if any, must match.
    requireHostHeader: false,
  });
  server.on(
    "request",
    (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (take(req.socket)) forward(req, res, rules).catch(() => {});
    },
  );
  server.on(
    "connect",
    (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      if (take(socket)) tunnel(req, socket, head, rules).catch(() => {});
    },
  );
  server.on("clientError", (err: Error, socket: net.Socket) => {
    // Behind the one request: ignored.
    if (take(socket)) {
      refuseOn(socket, new BadRequest(`Malformed request: ${err.message}`));
    }
  });
  const front = net.createServer((socket) => {
    if (sockets.size >= MAX_CONNECTIONS) return void socket.destroy();
    sockets.add(socket);
    socket.on("close", () => {
      sockets.delete(socket);
      clearTimeout(clocks.get(socket)); // it would hold the socket till then
    });
    socket.on("error", () => {});
    clocks.set(socket, setTimeout(() => socket.destroy(), rules.timeoutMs));
    readToken(socket, token).then((ok) => {
      if (!ok) return;
      server.emit("connection", socket);
      socket.resume();
    });
  });
  // A socket that cannot be made (no descriptor left, its folder gone) is
  // known at once (node:net binds a Unix socket synchronously) and thrown,
  // so that the process is not started; the error event that follows would
  // otherwise be uncaught and end the host.
  front.on("error", () => {});
  front.listen(path);
  if (!front.listening) {
    front.close();
    throw new Error(`Cannot open an egress proxy socket at ${path}`);
  }
  return {
    path,
    token,
    // Idempotent: a second call finds no server, sockets or file left.
    close() {
      front.close();
      for (const socket of sockets) socket.destroy();
      try {
        Deno.removeSync(path);
      } catch {
        // Gone already.
      }
    },
  };
}

/**
 * Reads the first line and compares it with the token; the bytes after it
 * are put back for the HTTP server, and the socket is left paused. A
 * connection without the token is destroyed here, in the event that shows
 * it: Deno's node:net keeps a socket destroyed a tick after its end for
 * good.
 */
function readToken(socket: net.Socket, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    let seen = Buffer.alloc(0);
    const refuse = () => {
      socket.destroy();
      resolve(false);
    };
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const nl = seen.indexOf(10);
      if (nl < 0 && seen.length < MAX_TOKEN_LINE) return;
      socket.off("data", onData);
      socket.off("end", refuse);
      socket.pause();
      if (nl < 0 || seen.toString("utf8", 0, nl).trim() !== token) {
        return refuse();
      }
      if (nl + 1 < seen.length) socket.unshift(seen.subarray(nl + 1));
      resolve(true);
    };
    socket.on("data", onData);
    socket.on("end", refuse);
  });
}

/** `CONNECT host:port`: check, connect to the checked address, splice. */
async function tunnel(
  req: http.IncomingMessage,
  socket: net.Socket,
  head: Buffer,
  rules: Rules,
): Promise<void> {
  try {
    // Host name characters only: a URL reads "?", "#" or a backslash as
    // the end of the host, and would check another port than the one
    // connected to.
    const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(
      req.url ?? "",
    );
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) {
      throw new BadRequest("CONNECT needs host:port");
    }
    // Checked as the https URL it stands for (the port written out).
    const url = new URL(`https://${m[1]}:${m[2]}/`);
    const address = await check(url, rules);
    const port = Number(url.port || 443); // the port that was checked
    const target = await connectTo(address, port, url, rules);
    socket.write("HTTP/1.1 200 Connection established\r\n\r\n");
    if (head.length > 0) target.write(head);
    // The process may half-close (send, then end) and read the answer;
    // a tunnel so left half-open ends after its time without traffic.
    socket.allowHalfOpen = true;
    socket.once("end", () => {
      target.setTimeout(rules.timeoutMs, () => target.destroy());
    });
    // Otherwise each side's end ends the other: `pipe` alone leaves the
    // upstream open in the host when the process's side is destroyed
    // (killed, or the proxy closed) rather than ended.
    target.on("error", () => socket.destroy());
    target.on("close", () => socket.destroy());
    socket.on("close", () => target.destroy());
    if (socket.destroyed) target.destroy(); // gone while it was checked
    socket.pipe(target).pipe(socket);
  } catch (err) {
    refuseOn(socket, err);
  }
}

/** An absolute-form `http://` request: checked, re-framed, sent once. */
async function forward(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  rules: Rules,
): Promise<void> {
  try {
    const url = requestUrl(req);
    const address = await check(url, rules);
    // The body's framing (`content-length`, `transfer-encoding`) goes on
    // as the client framed it (see send).
    const headers: Array<[string, string]> = [["host", url.host]];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!.toLowerCase();
      if (!HOP_HEADERS.has(name)) headers.push([name, req.rawHeaders[i + 1]!]);
    }
    headers.push(["connection", "close"]);
    const answer = await send(url, address, req, res, headers.flat(), rules);
    // The process's connection gone, the upstream goes too: nothing else
    // ends an answer nobody reads, or one that never comes.
    res.on("close", () => answer.destroy());
    const back: string[] = [];
    for (let i = 0; i < answer.rawHeaders.length; i += 2) {
      const name = answer.rawHeaders[i]!.toLowerCase();
      if (name !== "connection" && name !== "keep-alive") {
        back.push(name, answer.rawHeaders[i + 1]!);
      }
    }
    back.push("connection", "close");
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, back);
    answer.on("error", () => res.destroy());
    answer.pipe(res);
  } catch (err) {
    if (res.headersSent) res.destroy();
    else refuseOn(req.socket, err);
  }
}

/** The request's target, refusing what the proxy does not carry. */
function requestUrl(req: http.IncomingMessage): URL {
  if (req.httpVersion !== "1.1" && req.httpVersion !== "1.0") {
    throw new BadRequest("Only HTTP/1.x is proxied");
  }
  let url: URL;
  try {
    url = new URL(req.url ?? "");
  } catch {
    throw new BadRequest("The request target must be an absolute URL");
  }
  if (url.protocol !== "http:" || url.username || url.password) {
    throw new BadRequest(
      "Only http:// targets are proxied this way (https goes through CONNECT)",
    );
  }
  // The Host header says where a server routes the request: it must name
  // the host that was checked, or one checked connection reaches another
  // virtual host behind the same address.
  const hosts = req.headersDistinct.host ?? [];
  if (
    hosts.length > 1 ||
    (hosts.length === 1 && hosts[0]!.toLowerCase() !== url.host)
  ) {
    throw new BadRequest("The Host header must name the request's target");
  }
  // llhttp refuses two lengths and a length with a coding; it lets a coding
  // before `chunked` through, which would be passed on undecoded.
  const codings = req.headersDistinct["transfer-encoding"] ?? [];
  if (codings.length > 0 && codings.join().toLowerCase() !== "chunked") {
    throw new BadRequest("Ambiguous or unsupported body framing");
  }
  return url;
}

/** Sends the request to the checked address; resolves at the answer's head. */
function send(
  url: URL,
  address: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  headers: string[],
  rules: Rules,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const out = http.request({
      hostname: url.hostname,
      port: Number(url.port) || 80,
      path: url.pathname + url.search,
      method: req.method,
      // The body is framed as the client framed it (`content-length` or
      // `transfer-encoding: chunked`), re-encoded by Node from what llhttp
      // decoded: only this request's bytes go on.
      headers,
      lookup: pinnedLookup(address),
      agent: false,
      setHost: false,
    }, resolve);
    res.on("close", () => out.destroy());
    const late = setTimeout(() => {
      out.destroy(new SkillboxError("timeout", `Connecting to "${url.host}"`));
    }, rules.timeoutMs);
    out.on("socket", (s) => s.once("connect", () => clearTimeout(late)));
    out.on("error", (err) => {
      clearTimeout(late);
      reject(asUpstreamError(err, url));
    });
    out.on("response", () => clearTimeout(late));
    req.pipe(out);
  });
}

/** Checks the URL's host with the broker; the address to connect to. */
function check(url: URL, rules: Rules): Promise<string> {
  return rules.broker.checkTarget(
    url,
    rules.allow,
    AbortSignal.timeout(rules.timeoutMs),
  );
}

/** Connects to a checked address within the proxy's time. */
async function connectTo(
  address: string,
  port: number,
  url: URL,
  rules: Rules,
): Promise<net.Socket> {
  const target = net.connect({ host: address, port });
  const late = AbortSignal.timeout(rules.timeoutMs);
  try {
    await once(target, "connect", { signal: late });
    return target;
  } catch (err) {
    target.destroy();
    throw late.aborted
      ? new SkillboxError("timeout", `Connecting to "${url.host}"`)
      : asUpstreamError(err as Error, url);
  }
}

function asUpstreamError(err: Error, url: URL): SkillboxError {
  return err instanceof SkillboxError ? err : new SkillboxError(
    "tool_error",
    `Cannot connect to "${url.host}": ${err.message}`,
  );
}

/**
 * Answers an error as a proxy does, before anything was sent on, on the
 * raw socket: a CONNECT and a head that did not parse have no response
 * object, and one way serves all three.
 */
function refuseOn(socket: net.Socket, err: unknown): void {
  const status = err instanceof BadRequest
    ? 400
    : err instanceof SkillboxError && err.code === "tool_denied"
    ? 403
    : err instanceof SkillboxError && err.code === "timeout"
    ? 504
    : 502;
  const body = `skillbox egress: ${(err as Error).message}\n`;
  const text = http.STATUS_CODES[status];
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain\r\n` +
      `content-length: ${new TextEncoder().encode(body).length}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}
