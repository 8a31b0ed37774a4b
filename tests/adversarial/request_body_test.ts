/**
 * Request bodies that never end, or end too slowly, against a real host:
 * an endless chunked body is cut at the cap and answered 413 at once, and
 * a body trickled a byte at a time is answered 408 once
 * `limits.request_body_seconds` have passed, on every route that reads a
 * body (`POST /a2e/send`, `POST /mcp`, the console's `POST /login`).
 * Before, `/a2e/send` read an endless body for ever (discarding it), and
 * no route bounded the time a body may take: the request, and what it
 * holds, never ended.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createHost } from "../../runtime/host.ts";
import { within } from "./_helpers.ts";

const TOKEN = "body-token-0123456789";
const encoder = new TextEncoder();

/**
 * Sends a request head over a raw connection, then feeds its body: an
 * endless run of 16 KiB chunks (chunked), or one byte every 50 ms (of a
 * declared `Content-Length`). Resolves with the response's status line.
 */
async function rawRequest(
  url: string,
  path: string,
  head: Record<string, string>,
  body: "endless" | "trickle",
): Promise<string> {
  const { hostname, port, host } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  const lines = Object.entries({
    host,
    ...head,
    ...(body === "endless"
      ? { "transfer-encoding": "chunked" }
      : { "content-length": "1000" }),
  }).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  await conn.write(encoder.encode(`POST ${path} HTTP/1.1\r\n${lines}\r\n`));
  let feeding = true;
  const chunk = encoder.encode(`4000\r\n${"x".repeat(0x4000)}\r\n`);
  const feed = (async () => {
    try {
      while (feeding) {
        if (body === "endless") {
          // A write may take part of the chunk: the rest follows.
          for (let at = 0; at < chunk.length;) {
            at += await conn.write(chunk.subarray(at));
          }
        } else {
          await conn.write(encoder.encode("x"));
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    } catch {
      // The host closed the connection.
    }
  })();
  try {
    const buf = new Uint8Array(4096);
    const n = await within(conn.read(buf), 30_000, `an answer to ${path}`);
    return new TextDecoder().decode(buf.subarray(0, n ?? 0)).split("\r\n")[0]!;
  } finally {
    feeding = false;
    try {
      conn.close();
    } catch {
      // Closed already.
    }
    await feed;
  }
}

Deno.test("request bodies that never end are cut at the cap (413) or at the body time (408)", async (t) => {
  const host = createHost({
    // A 64 KiB cap is passed in four chunks, long before the body time,
    // however busy the machine: at the default 4 MiB a loaded machine
    // could spend the whole second sending, and be answered 408.
    config: {
      tokens: [TOKEN],
      limits: { requestBodySeconds: 1, maxMessageBytes: 64 * 1024 },
    },
    capabilities: [],
  });
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  const bearer = { authorization: `Bearer ${TOKEN}` };
  try {
    const opened = await fetch(`${url}/a2e/session`, {
      method: "POST",
      headers: bearer,
    });
    const { session_id: id } = await opened.json();
    const sse = { ...bearer, "x-session-id": id };
    await t.step("POST /a2e/send, endless", async () => {
      assert.match(await rawRequest(url, "/a2e/send", sse, "endless"), / 413 /);
    });
    await t.step("POST /a2e/send, trickled", async () => {
      assert.match(await rawRequest(url, "/a2e/send", sse, "trickle"), / 408 /);
    });
    const mcp = {
      ...bearer,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    await t.step("POST /mcp, endless", async () => {
      assert.match(await rawRequest(url, "/mcp", mcp, "endless"), / 413 /);
    });
    await t.step("POST /mcp, trickled", async () => {
      assert.match(await rawRequest(url, "/mcp", mcp, "trickle"), / 408 /);
    });
    await t.step("POST /login, trickled", async () => {
      const form = { "content-type": "application/x-www-form-urlencoded" };
      assert.match(await rawRequest(url, "/login", form, "trickle"), / 408 /);
    });
    // The session is still served.
    const ping = await fetch(`${url}/a2e/send`, {
      method: "POST",
      headers: sse,
      body: JSON.stringify({ type: "ping", id: "p", version: "1.0", ts: 0 }),
    });
    assert.equal(ping.status, 200);
    await ping.body?.cancel();
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
});
