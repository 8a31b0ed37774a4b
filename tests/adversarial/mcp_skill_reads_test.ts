/**
 * Skill files read over MCP and left unread cannot pile up in the host: a
 * token's `resources/read` (and the other skill, resource and prompt
 * requests, which run no tool) are bounded in flight across its sessions
 * and connections, from arrival until the host has handed the answer's
 * bytes to the socket. Past the bound a request is refused at once with a
 * JSON-RPC error; another token is still served, and a read whose answer
 * was read to its end frees its place.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { withHost } from "../mcp/_host.ts";
import { connectMcp } from "../support/mcp_client.ts";

// 15 MiB, under the 16 MiB bound on a whole skill.
const FILE_BYTES = 15 * 1024 * 1024;
const URI = "skill://big/data.txt";
// The default bound (limits.mcp_reads_per_token).
const BOUND = 4;

async function setup(skills: string): Promise<void> {
  await Deno.mkdir(join(skills, "big"));
  await Deno.writeTextFile(
    join(skills, "big", "SKILL.md"),
    "---\nname: big\ndescription: A large file\n---\nRead data.txt.\n",
  );
  await Deno.writeTextFile(
    join(skills, "big", "data.txt"),
    "0123456789abcdef".repeat(FILE_BYTES / 16),
  );
}

/** An MCP session of `token`, opened by the SDK client; posts go raw. */
async function session(url: string, token: string) {
  const client = await connectMcp(url, token);
  const id = (client.transport as StreamableHTTPClientTransport).sessionId!;
  let next = 1000;
  return {
    client,
    /** Posts one `resources/read`; the answer's body is left unread. */
    read: () =>
      fetch(`${url}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": id,
          "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: next++,
          method: "resources/read",
          params: { uri: URI },
        }),
      }),
  };
}

interface Seen {
  response: Response;
  reader: ReadableStreamDefaultReader<Uint8Array>;
  /** The start of the body: a result, or the refusal whole. */
  head: string;
}

// Reads only the first chunk of an answer: the rest stays unread.
async function peek(response: Response): Promise<Seen> {
  const reader = response.body!.getReader();
  const first = await reader.read();
  return {
    response,
    reader,
    head: new TextDecoder().decode(first.value ?? new Uint8Array()),
  };
}

// The whole of a (small) answer whose first chunk was peeked at.
async function readRest(s: Seen): Promise<string> {
  let text = s.head;
  const decoder = new TextDecoder();
  for (
    let next = await s.reader.read();
    !next.done;
    next = await s.reader.read()
  ) {
    text += decoder.decode(next.value);
  }
  return text;
}

const answered = (s: Seen) => /"result"/.test(s.head.slice(0, 200));

Deno.test("a token's unread skill-file reads over MCP are bounded across its sessions, and another token is served", async () => {
  await withHost(
    { tokens: ["hostile", "other"], setup },
    async ({ url }) => {
      const a = await session(url, "hostile");
      const b = await session(url, "hostile");
      const other = await connectMcp(url, "other");
      const held: Seen[] = [];
      const all: Seen[] = [];
      try {
        // Twelve reads at once over two sessions (and as many
        // connections), none of whose answers is read.
        const seen = await Promise.all(
          Array.from(
            { length: 12 },
            (_, i) => (i % 2 ? a : b).read().then(peek),
          ),
        );
        all.push(...seen);
        held.push(...seen.filter(answered));
        const refused = seen.filter((s) => !answered(s));
        assert.equal(
          held.length,
          BOUND,
          `${held.length} reads of one token were worked on at once`,
        );
        for (const s of refused) {
          const body = JSON.parse(await readRest(s));
          assert.equal(body.error.code, -32000, JSON.stringify(body));
          assert.match(
            body.error.message,
            /^Cannot handle "resources\/read": this token's quota of 4 skill, resource and prompt requests in flight is used up/,
          );
          assert.deepEqual(body.error.data, {
            quota: "mcp_reads_per_token",
            retryable: true,
          });
        }

        // Another token reads the whole file meanwhile.
        const read = await other.readResource({ uri: URI });
        const content = read.contents[0] as { text?: string };
        assert.equal(content.text?.length, FILE_BYTES);

        // An answer read to its end gives its place back.
        const done = held.shift()!;
        while (!(await done.reader.read()).done) { /* drain */ }
        const again = await peek(await a.read());
        all.push(again);
        assert.ok(answered(again), again.head.slice(0, 200));
        const over = await peek(await b.read());
        all.push(over);
        assert.ok(!answered(over), "a fifth read was worked on");
      } finally {
        for (const s of all) await s.reader.cancel().catch(() => {});
        await a.client.close();
        await b.client.close();
        await other.close();
      }
    },
  );
});
