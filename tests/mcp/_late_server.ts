/**
 * An MCP server (stdio, official SDK) whose start the tests control, for
 * the late-start, retry and content tests:
 * - `--count FILE`: appends a line to FILE at each start (its attempts);
 * - `--pid FILE`: writes its process id to FILE;
 * - `--wait FIFO`: reads the named pipe FIFO to its end before serving
 *   (the test opens it for writing when the server may be ready);
 * - `--ready FILE`: exits 1 at once, saying why on stderr, unless FILE
 *   exists.
 * Tools: `echo`, `crash` (exits), `content` (text, image, audio, a text
 * and a blob resource, a resource link), `huge_image` (an image of
 * `bytes` bytes).
 *
 * @module
 */

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import process from "node:process";
import { orderedStdout } from "../../runtime/mcp/stdio.ts";

/** A 1×1 red PNG. */
export const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/** A WAV header with no samples. */
export const WAV = btoa("RIFF$\x00\x00\x00WAVEfmt ");

function option(name: string): string | undefined {
  const at = Deno.args.indexOf(name);
  return at >= 0 ? Deno.args[at + 1] : undefined;
}

async function main(): Promise<void> {
  const count = option("--count");
  if (count) await Deno.writeTextFile(count, "start\n", { append: true });
  const pid = option("--pid");
  if (pid) await Deno.writeTextFile(pid, String(Deno.pid));
  const ready = option("--ready");
  if (ready) {
    try {
      await Deno.stat(ready);
    } catch {
      await Deno.stderr.write(
        new TextEncoder().encode(
          `Error: not ready yet (${ready} is missing)\n`,
        ),
      );
      Deno.exit(1);
    }
  }
  const fifo = option("--wait");
  if (fifo) {
    // Opening blocks until the test opens the pipe's other end.
    const file = await Deno.open(fifo, { read: true });
    for await (const _ of file.readable) {
      // Read to the end: the writer closing it is the signal.
    }
  }
  const tool = (name: string) => ({
    name,
    description: name,
    inputSchema: { type: "object" as const },
  });
  const server = new Server({ name: "late", version: "1.0.0" }, {
    capabilities: { tools: {} },
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: ["echo", "crash", "content", "huge_image"].map(tool),
  }));
  server.setRequestHandler(
    CallToolRequestSchema,
    (request: CallToolRequest) => {
      const args = request.params.arguments ?? {};
      switch (request.params.name) {
        case "echo":
          return { content: [{ type: "text", text: String(args.text) }] };
        case "crash":
          Deno.exit(3);
          break;
        case "content":
          return {
            content: [
              { type: "text", text: "all kinds" },
              { type: "image", data: PNG, mimeType: "image/png" },
              { type: "audio", data: WAV, mimeType: "audio/wav" },
              {
                type: "resource",
                resource: {
                  uri: "test://notes.txt",
                  mimeType: "text/plain",
                  text: "some notes",
                },
              },
              {
                type: "resource",
                resource: {
                  uri: "test://pixel.png",
                  mimeType: "image/png",
                  blob: PNG,
                },
              },
              {
                type: "resource_link",
                uri: "test://big.bin",
                name: "big.bin",
                mimeType: "application/octet-stream",
                description: "Too big to send",
              },
            ],
          };
        case "huge_image": {
          const bytes = new Uint8Array(Number(args.bytes ?? 0)).fill(0x41);
          let binary = "";
          for (let i = 0; i < bytes.length; i += 0x8000) {
            binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
          }
          return {
            content: [
              { type: "text", text: "huge" },
              { type: "image", data: btoa(binary), mimeType: "image/png" },
              { type: "image", data: PNG, mimeType: "image/png" },
            ],
          };
        }
      }
      return {
        isError: true,
        content: [{ type: "text", text: "no such tool" }],
      };
    },
  );
  await server.connect(
    new StdioServerTransport(process.stdin, orderedStdout()),
  );
}

if (import.meta.main) await main();
