/**
 * A raw HTTP+SSE test client speaking A2E-WIRE.md §7 with plain `fetch`.
 *
 * @module
 */

import type { Msg } from "./wire.ts";

/** One open `/stream`. */
export interface SseStream {
  /** The next `data:` message, or a rejection after `timeoutMs`. */
  next(timeoutMs?: number): Promise<Msg>;
  /** Drops the connection, as a client that goes away would. */
  close(): Promise<void>;
}

/** A transport session against `base` (e.g. `http://127.0.0.1:1/a2e`). */
export interface SseClient {
  readonly sessionId: string;
  /** POSTs one raw message to /send; returns the HTTP response. */
  send(raw: string): Promise<Response>;
  /** Opens /stream. */
  stream(): Promise<SseStream>;
}

/**
 * Opens a transport session.
 *
 * @example
 * ```ts ignore
 * const client = await openSse("http://127.0.0.1:8787/a2e");
 * ```
 */
export async function openSse(
  base: string,
  open: { headers?: Record<string, string> } = {},
): Promise<SseClient> {
  const res = await fetch(`${base}/session`, {
    method: "POST",
    headers: open.headers,
  });
  const { session_id: sessionId } = await res.json();
  // On every request, as the Python SDK sends its `headers`: a session
  // opened with a token answers only requests that present it.
  const headers = { ...open.headers, "x-session-id": sessionId };
  // Sent on reconnect, as a browser's EventSource does.
  let lastEventId = "";
  return {
    sessionId,
    send: (raw) =>
      fetch(`${base}/send`, {
        method: "POST",
        headers: { ...headers, "content-type": "text/plain" },
        body: raw,
      }),
    async stream() {
      const abort = new AbortController();
      const res = await fetch(`${base}/stream`, {
        headers: lastEventId === ""
          ? headers
          : { ...headers, "last-event-id": lastEventId },
        signal: abort.signal,
      });
      if (!res.ok || !res.body) {
        throw new Error(`Cannot open stream: HTTP ${res.status}`);
      }
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      const inbox: Msg[] = [];
      const fill = async (timeoutMs: number) => {
        const timer = setTimeout(() => abort.abort(), timeoutMs);
        try {
          while (inbox.length === 0) {
            const { done, value } = await reader.read();
            if (done) throw new Error("Stream ended");
            buffer += value;
            let end;
            while ((end = buffer.indexOf("\n\n")) >= 0) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              const id = block.split("\n").find((l) => l.startsWith("id:"));
              if (id) lastEventId = id.slice(3).trim();
              const data = block.split("\n").filter((l) =>
                l.startsWith("data:")
              ).map((l) => l.slice(5).trimStart()).join("\n");
              if (data !== "") inbox.push(JSON.parse(data));
            }
          }
        } finally {
          clearTimeout(timer);
        }
      };
      return {
        async next(timeoutMs = 5000) {
          if (inbox.length === 0) await fill(timeoutMs);
          return inbox.shift()!;
        },
        async close() {
          abort.abort();
          await reader.cancel().catch(() => {});
        },
      };
    },
  };
}
