/**
 * The HTTP/1.1 the egress proxy reads: a buffered reader over a
 * connection, request and response heads, and where a chunked body ends.
 * Strict on purpose: anything ambiguous (two `Host` or `Content-Length`
 * headers, a transfer coding other than `chunked`, a bare LF) is refused
 * rather than guessed at, since guessing is how requests get smuggled.
 *
 * @module
 */

/** One parsed head: the start line's three parts and the headers. */
export interface Head {
  /** Request: method; response: `HTTP/1.x`. */
  first: string;
  /** Request: target; response: status code. */
  second: string;
  /** Request: `HTTP/1.x`; response: reason phrase. */
  third: string;
  /** Headers, names lower-cased, in order. */
  headers: Array<[string, string]>;
}

const CRLF2 = new Uint8Array([13, 10, 13, 10]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A malformed message: the proxy answers 400 (or drops the connection). */
export class HttpParseError extends Error {
  override name = "HttpParseError";
}

/** Reads a connection through a buffer, so a head can be read whole. */
export class ConnReader {
  #conn: Deno.Conn;
  #buf = new Uint8Array(0);

  /** @param conn the connection to read */
  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  /** Bytes read past what was taken (sent on as they are). */
  rest(): Uint8Array {
    const out = this.#buf;
    this.#buf = new Uint8Array(0);
    return out;
  }

  /** Reads until `delim` (included) within `max` bytes; null at EOF first. */
  async until(delim: Uint8Array, max: number): Promise<Uint8Array | null> {
    let from = 0;
    while (true) {
      const at = indexOf(this.#buf, delim, from);
      if (at >= 0) {
        const end = at + delim.length;
        const out = this.#buf.slice(0, end);
        this.#buf = this.#buf.slice(end);
        return out;
      }
      if (this.#buf.length >= max) {
        throw new HttpParseError(`Head longer than ${max} bytes`);
      }
      from = Math.max(0, this.#buf.length - delim.length + 1);
      if (!await this.#fill()) return null;
    }
  }

  /** The next chunk of bytes (buffered first), or null at EOF. */
  async next(): Promise<Uint8Array | null> {
    if (this.#buf.length > 0) return this.rest();
    const chunk = new Uint8Array(64 * 1024);
    const n = await this.#conn.read(chunk);
    return n === null ? null : chunk.subarray(0, n);
  }

  async #fill(): Promise<boolean> {
    const chunk = new Uint8Array(16 * 1024);
    const n = await this.#conn.read(chunk);
    if (n === null) return false;
    const merged = new Uint8Array(this.#buf.length + n);
    merged.set(this.#buf);
    merged.set(chunk.subarray(0, n), this.#buf.length);
    this.#buf = merged;
    return true;
  }

  /** Reads one head (through the blank line) of at most `max` bytes. */
  async head(max: number): Promise<Head | null> {
    const bytes = await this.until(CRLF2, max);
    return bytes === null ? null : parseHead(bytes);
  }
}

/**
 * Parses a head (start line and headers, CRLF line ends).
 *
 * @param bytes the head, through its blank line
 * @returns the parts
 * @throws {HttpParseError} for anything malformed
 */
export function parseHead(bytes: Uint8Array): Head {
  const text = new TextDecoder("latin1").decode(bytes);
  if (/[^\r]\n|\r[^\n]|\0/.test(text.slice(0, -4) + "\r\n")) {
    throw new HttpParseError("Bare CR, LF or NUL in the head");
  }
  const lines = text.slice(0, -4).split("\r\n");
  const start = /^(\S+) (\S+) ?(.*)$/.exec(lines[0] ?? "");
  if (!start) throw new HttpParseError("Malformed start line");
  const headers: Array<[string, string]> = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon);
    if (colon <= 0 || !TOKEN.test(name)) {
      throw new HttpParseError(`Malformed header line`);
    }
    headers.push([name.toLowerCase(), line.slice(colon + 1).trim()]);
  }
  return { first: start[1]!, second: start[2]!, third: start[3]!, headers };
}

/** Every value of a header (names are lower case). */
export function headerValues(head: Head, name: string): string[] {
  return head.headers.filter(([n]) => n === name).map(([, v]) => v);
}

/** How a request body is delimited. */
export type BodyFraming =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" };

/**
 * The framing of a request body, refusing every ambiguous combination.
 *
 * @param head the request head
 * @returns how the body ends
 * @throws {HttpParseError} for two lengths, a coding other than chunked,
 * or both a length and a coding
 */
export function bodyFraming(head: Head): BodyFraming {
  const lengths = headerValues(head, "content-length");
  const codings = headerValues(head, "transfer-encoding");
  if (codings.length > 0) {
    if (
      lengths.length > 0 || codings.length > 1 ||
      codings[0]!.toLowerCase() !== "chunked"
    ) {
      throw new HttpParseError("Ambiguous or unsupported body framing");
    }
    return { kind: "chunked" };
  }
  if (lengths.length > 1) {
    throw new HttpParseError("Two Content-Length headers");
  }
  if (lengths.length === 0) return { kind: "none" };
  if (!/^\d{1,15}$/.test(lengths[0]!)) {
    throw new HttpParseError("Malformed Content-Length");
  }
  return { kind: "length", length: Number(lengths[0]) };
}

/**
 * Finds where a chunked body ends, fed in pieces: each `feed` returns how
 * many of the given bytes belong to the body (all of them until the end
 * is seen), and `done` turns true at the end.
 *
 * @example
 * ```ts
 * import { ChunkedEnd } from "./_proxy_http.ts";
 * import assert from "node:assert/strict";
 * const end = new ChunkedEnd();
 * const bytes = new TextEncoder().encode("3\r\nabc\r\n0\r\n\r\nGET /next");
 * assert.equal(end.feed(bytes), 13);
 * assert.equal(end.done, true);
 * ```
 */
export class ChunkedEnd {
  /** Whether the last chunk and trailers have been seen. */
  done = false;
  #state: "size" | "data" | "data-crlf" | "trailer" = "size";
  #line = "";
  #left = 0;

  /**
   * @param bytes the next bytes of the body
   * @returns how many of them are body (the rest is past its end)
   * @throws {HttpParseError} for a malformed chunk
   */
  feed(bytes: Uint8Array): number {
    let i = 0;
    while (i < bytes.length && !this.done) {
      if (this.#state === "data") {
        const take = Math.min(this.#left, bytes.length - i);
        i += take;
        this.#left -= take;
        if (this.#left === 0) {
          this.#state = "data-crlf";
          this.#line = "";
        }
        continue;
      }
      const c = bytes[i++]!;
      this.#line += String.fromCharCode(c);
      if (this.#line.length > 4096) throw new HttpParseError("Chunk line");
      if (c !== 10) continue;
      const line = this.#line;
      this.#line = "";
      if (!line.endsWith("\r\n")) throw new HttpParseError("Bare LF");
      this.#onLine(line.slice(0, -2));
    }
    return i;
  }

  #onLine(line: string): void {
    if (this.#state === "data-crlf") {
      if (line !== "") throw new HttpParseError("Chunk longer than its size");
      this.#state = "size";
    } else if (this.#state === "size") {
      const m = /^([0-9a-fA-F]{1,12})(;.*)?$/.exec(line);
      if (!m) throw new HttpParseError("Malformed chunk size");
      this.#left = parseInt(m[1]!, 16);
      this.#state = this.#left === 0 ? "trailer" : "data";
    } else if (line === "") this.done = true;
  }
}

function indexOf(hay: Uint8Array, needle: Uint8Array, from: number): number {
  outer: for (let i = from; i <= hay.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) {
      if (hay[i + j] !== needle[j]) continue outer;
    }
    return i;
  }
  return -1;
}
