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
 * what flows inside is the client's own).
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";
import { splice } from "../../protocol/egress_relay.ts";
import type { EgressBroker } from "./broker.ts";
import {
  type BodyFraming,
  bodyFraming,
  ChunkedEnd,
  ConnReader,
  type Head,
  headerValues,
  HttpParseError,
} from "./_proxy_http.ts";
import { privateSocketPath } from "../private_sockets.ts";

/** Options of {@link openEgressProxy}. */
export interface EgressProxyOptions {
  /** The broker whose rules apply (private hosts, name resolution). */
  broker: Pick<EgressBroker, "checkTarget">;
  /** Hosts the principal may reach (`name`, `name:port`, `*`). */
  allow: readonly string[];
  /** Who it serves, for messages. @default "sandbox" */
  principal?: string;
  /** Most connections open at once. @default 64 */
  maxConnections?: number;
  /** Time to send a complete head, and to connect. @default 10000 */
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
const NEWLINE = new Uint8Array([10]);
// Set by the proxy on the hop it makes, never passed on from the client.
const HOP = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "upgrade",
]);

/**
 * Opens a proxy socket for one principal. Synchronous: the socket exists
 * when this returns, so a process can be started against it at once.
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
  const listener = Deno.listen({ transport: "unix", path });
  const token = randomHex(24);
  const conns = new Set<Deno.Conn>();
  const max = options.maxConnections ?? 64;
  const rules: Rules = {
    broker: options.broker,
    allow: [[...options.allow]],
    principal: options.principal ?? "sandbox",
    timeoutMs: options.timeoutMs ?? 10_000,
    token,
  };
  let closed = false;
  (async () => {
    for await (const conn of listener) {
      if (conns.size >= max) {
        conn.close();
        continue;
      }
      conns.add(conn);
      serve(conn, rules).finally(() => conns.delete(conn));
    }
  })().catch(() => {});
  return {
    path,
    token,
    close() {
      if (closed) return;
      closed = true;
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Already closed.
        }
      }
      try {
        Deno.removeSync(path);
      } catch {
        // Gone already.
      }
    },
  };
}

interface Rules {
  broker: Pick<EgressBroker, "checkTarget">;
  allow: string[][];
  principal: string;
  timeoutMs: number;
  token: string;
}

/** One client connection: token line, head, then a tunnel or one request. */
async function serve(conn: Deno.Conn, rules: Rules): Promise<void> {
  const reader = new ConnReader(conn);
  // The head must arrive in time; a slow client cannot hold a slot.
  const timer = setTimeout(() => closeQuietly(conn), rules.timeoutMs);
  let head: Head | null;
  try {
    const line = await reader.until(NEWLINE, 256);
    const token = line && new TextDecoder().decode(line).trim();
    if (token !== rules.token) return closeQuietly(conn);
    head = await reader.head(MAX_HEAD);
  } catch {
    return closeQuietly(conn);
  } finally {
    clearTimeout(timer);
  }
  if (head === null) return closeQuietly(conn);
  try {
    if (head.first === "CONNECT") await tunnel(conn, reader, head, rules);
    else await forward(conn, reader, head, rules);
  } catch (err) {
    await refuse(conn, err);
  }
}

/** `CONNECT host:port`: check, connect to the checked address, splice. */
async function tunnel(
  conn: Deno.Conn,
  reader: ConnReader,
  head: Head,
  rules: Rules,
): Promise<void> {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^\s:/@\[\]]+):(\d{1,5})$/.exec(head.second);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) {
    throw new HttpParseError("CONNECT needs host:port");
  }
  // Checked as the https URL it stands for (the port written out).
  const url = new URL(`https://${m[1]}:${m[2]}/`);
  const target = await connectChecked(url, Number(m[2]), rules);
  await conn.write(
    new TextEncoder().encode("HTTP/1.1 200 Connection established\r\n\r\n"),
  );
  const early = reader.rest();
  if (early.length > 0) await writeAll(target, early);
  await splice(conn, target);
}

/** An absolute-form `http://` request: checked, re-framed, sent once. */
async function forward(
  conn: Deno.Conn,
  reader: ConnReader,
  head: Head,
  rules: Rules,
): Promise<void> {
  if (!/^HTTP\/1\.[01]$/.test(head.third)) {
    throw new HttpParseError("Only HTTP/1.x is proxied");
  }
  let url: URL;
  try {
    url = new URL(head.second);
  } catch {
    throw new HttpParseError("The request target must be an absolute URL");
  }
  if (url.protocol !== "http:" || url.username || url.password) {
    throw new HttpParseError(
      "Only http:// targets are proxied this way (https goes through CONNECT)",
    );
  }
  // The Host header says where a server routes the request: it must name
  // the host that was checked, or one checked connection reaches another
  // virtual host behind the same address.
  const hosts = headerValues(head, "host");
  if (
    hosts.length > 1 ||
    (hosts.length === 1 && hosts[0]!.toLowerCase() !== url.host)
  ) {
    throw new HttpParseError("The Host header must name the request's target");
  }
  const framing = bodyFraming(head);
  const target = await connectChecked(url, Number(url.port) || 80, rules);
  try {
    let out = `${head.first} ${url.pathname}${url.search} HTTP/1.1\r\n` +
      `host: ${url.host}\r\n`;
    for (const [name, value] of head.headers) {
      if (!HOP.has(name)) out += `${name}: ${value}\r\n`;
    }
    out += "connection: close\r\n\r\n";
    await writeAll(target, new TextEncoder().encode(out));
    await sendBody(reader, target, framing);
    // Only this request's bytes went on: anything the client pipelined
    // after it is never read, let alone sent.
    await answer(target, conn);
  } finally {
    closeQuietly(target);
  }
  closeQuietly(conn);
}

/** Sends exactly the request's body, as framed. */
async function sendBody(
  reader: ConnReader,
  target: Deno.Conn,
  framing: BodyFraming,
): Promise<void> {
  if (framing.kind === "none") return;
  let left = framing.kind === "length" ? framing.length : Infinity;
  const chunked = framing.kind === "chunked" ? new ChunkedEnd() : null;
  while (left > 0 && !chunked?.done) {
    const bytes = await reader.next();
    if (bytes === null) throw new HttpParseError("The body ended early");
    const take = chunked ? chunked.feed(bytes) : Math.min(left, bytes.length);
    await writeAll(target, bytes.subarray(0, take));
    left -= take;
  }
}

/** The target's answer, with its head's `Connection` made `close`. */
async function answer(target: Deno.Conn, conn: Deno.Conn): Promise<void> {
  const reader = new ConnReader(target);
  const head = await reader.head(MAX_HEAD);
  if (head === null) throw new SkillboxError("tool_error", "No answer");
  let out = `${head.first} ${head.second} ${head.third}\r\n`;
  for (const [name, value] of head.headers) {
    if (name !== "connection" && name !== "keep-alive") {
      out += `${name}: ${value}\r\n`;
    }
  }
  out += "connection: close\r\n\r\n";
  try {
    await writeAll(conn, new TextEncoder().encode(out));
    for (let bytes = await reader.next(); bytes; bytes = await reader.next()) {
      await writeAll(conn, bytes);
    }
  } catch {
    // Either side left mid-answer: nothing more can be said on it.
  }
}

/** Checks the URL's host with the broker and connects to that address. */
async function connectChecked(
  url: URL,
  port: number,
  rules: Rules,
): Promise<Deno.Conn> {
  const signal = AbortSignal.timeout(rules.timeoutMs);
  const address = await rules.broker.checkTarget(url, rules.allow, signal);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const connecting = Deno.connect({ hostname: address, port });
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      connecting.then(closeQuietly, () => {});
      reject(new SkillboxError("timeout", `Connecting to "${url.host}"`));
    }, rules.timeoutMs);
  });
  try {
    return await Promise.race([connecting, late]);
  } catch (err) {
    if (err instanceof SkillboxError) throw err;
    throw new SkillboxError(
      "tool_error",
      `Cannot connect to "${url.host}": ${(err as Error).message}`,
    );
  } finally {
    clearTimeout(timer);
  }
}

/** Answers an error as a proxy does (nothing was sent on yet). */
async function refuse(conn: Deno.Conn, err: unknown): Promise<void> {
  const [status, text] = err instanceof HttpParseError
    ? [400, "Bad Request"]
    : err instanceof SkillboxError && err.code === "tool_denied"
    ? [403, "Forbidden"]
    : err instanceof SkillboxError && err.code === "timeout"
    ? [504, "Gateway Timeout"]
    : [502, "Bad Gateway"];
  const body = new TextEncoder().encode(
    `skillbox egress: ${(err as Error).message}\n`,
  );
  const head = `HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain\r\n` +
    `content-length: ${body.length}\r\nconnection: close\r\n\r\n`;
  try {
    await writeAll(conn, new TextEncoder().encode(head));
    await writeAll(conn, body);
  } catch {
    // The client left.
  }
  closeQuietly(conn);
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

function randomHex(bytes: number): string {
  return [...crypto.getRandomValues(new Uint8Array(bytes))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}
