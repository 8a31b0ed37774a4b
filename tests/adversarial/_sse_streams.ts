/**
 * An A2E session over HTTP+SSE whose streams are raw connections, for the
 * tests of clients that open streams and never read them, and the wait for
 * the fixture's flood calls to end.
 *
 * @module
 */

import type { HostProcess } from "./_host_process.ts";
import { within } from "./_helpers.ts";

const encoder = new TextEncoder();

/** An HTTP+SSE session of a host process. */
export interface RawSseSession {
  /** Its `session_id`. */
  readonly id: string;
  /** POSTs one message to `/a2e/send`, dropping the answer's body. */
  send(message: object): Promise<void>;
  /** Opens `GET /a2e/stream` on a raw connection; reads only its status. */
  stream(): Promise<{ status: number; conn: Deno.TcpConn }>;
}

/** Opens an HTTP+SSE session on `host`. */
export async function rawSseSession(host: HostProcess): Promise<RawSseSession> {
  const opened = await fetch(`${host.url}/a2e/session`, { method: "POST" });
  const { session_id: id } = await opened.json();
  const url = new URL(host.url);
  return {
    id,
    async send(message) {
      const res = await fetch(`${host.url}/a2e/send`, {
        method: "POST",
        headers: { "x-session-id": id },
        body: JSON.stringify(message),
      });
      await res.body?.cancel();
    },
    async stream() {
      const conn = await Deno.connect({
        hostname: url.hostname,
        port: Number(url.port),
      });
      await conn.write(encoder.encode(
        `GET /a2e/stream HTTP/1.1\r\nHost: ${url.host}\r\nX-Session-Id: ${id}\r\n\r\n`,
      ));
      const buf = new Uint8Array(512);
      const n = await within(
        conn.read(buf),
        10_000,
        "the stream's status line",
      );
      const line = new TextDecoder().decode(buf.subarray(0, n ?? 0));
      return { status: Number(line.split(" ")[1]), conn };
    },
  };
}

/** Waits until `count` runs of the flood tool have ended (the history). */
export async function floodsEnded(
  host: HostProcess,
  count: number,
): Promise<void> {
  // The history is the host's record that a call ended: polled, bounded.
  for (let i = 0; i < 1200; i++) {
    const page = await (await fetch(`${host.url}/api/runs?limit=200`)).json();
    const ended = (page.runs as Record<string, unknown>[]).filter((r) =>
      r.name === "flood" && r.ended_at !== null
    );
    if (ended.length >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Fewer than ${count} flood runs ended within 60 s`);
}
