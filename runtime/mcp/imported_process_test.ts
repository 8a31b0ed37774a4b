import assert from "node:assert/strict";
import { firstErrorLine, ProcessClientTransport } from "./imported_process.ts";
import { settlesWithin } from "../deadline.ts";

Deno.test("firstErrorLine() skips Node's location, excerpt, frames, braces and banner", () => {
  const stderr = [
    "node:internal/modules/cjs/loader:1228",
    "  throw err;",
    "  ^",
    "",
    "Error: Cannot find module '/srv/server/dist/index.js'",
    "    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)",
    "    at node:internal/main/run_main_module:28:49 {",
    "  code: 'MODULE_NOT_FOUND',",
    "  requireStack: []",
    "}",
    "",
    "Node.js v20.20.2",
  ].join("\n");
  assert.equal(
    firstErrorLine(stderr),
    "Error: Cannot find module '/srv/server/dist/index.js'",
  );
});

Deno.test("firstErrorLine() prefers an error line to a banner the server printed first", () => {
  const stderr = "Secure MCP Filesystem Server running on stdio\n" +
    "file:///srv/x.js:3\n" +
    "Error: EROFS: read-only file system, open '/srv/data/a'\n";
  assert.equal(
    firstErrorLine(stderr),
    "Error: EROFS: read-only file system, open '/srv/data/a'",
  );
  assert.equal(firstErrorLine("Starting up\nready\n"), "Starting up");
  assert.equal(firstErrorLine("\n  \n}\n"), null);
});

Deno.test("a server's start error is its first meaningful stderr line, the tail kept", async () => {
  const lines = Array.from({ length: 200 }, (_, i) => `noise line ${i}`);
  const transport = new ProcessClientTransport({
    command: "sh",
    args: [
      "-c",
      `echo "Error: first failure" >&2; for l in ${
        lines.map((l) => `'${l}'`).join(" ")
      }; do echo "$l" >&2; done; echo "Node.js v20.1.0" >&2`,
    ],
  });
  const closed = new Promise<void>((resolve) => transport.onclose = resolve);
  await transport.start();
  await closed;
  // The tail alone no longer holds the first line; the head does.
  assert.doesNotMatch(transport.stderrTail, /first failure/);
  assert.match(transport.stderrTail, /Node\.js v20/);
  assert.equal(transport.stderrError, "Error: first failure");
});

Deno.test("a server that never ends its line is stopped at the message bound", async () => {
  // An endless line on stdout, no newline ever.
  const transport = new ProcessClientTransport({
    command: "sh",
    args: ["-c", "yes x | tr -d '\\n'"],
  });
  const errors: Error[] = [];
  transport.onerror = (error) => errors.push(error);
  const closed = new Promise<void>((resolve) => transport.onclose = resolve);
  await transport.start();
  await closed;
  assert.match(
    errors.map((e) => e.message).join("\n"),
    /The MCP server wrote a message over 16777216 bytes: stopped it/,
  );
});

Deno.test("a server that stops reading its stdin is stopped once 64 MiB wait for it", async () => {
  // It never reads: what the host sends it (an answer to each of its
  // pings, say) would wait in the host's memory without end.
  const transport = new ProcessClientTransport({
    command: "sleep",
    args: ["600"],
  });
  const closed = new Promise<void>((resolve) => transport.onclose = resolve);
  await transport.start();
  const answer = {
    jsonrpc: "2.0" as const,
    id: 1,
    result: { pad: "x".repeat(1 << 20) },
  };
  const sends: Promise<void>[] = [];
  for (let i = 0; i < 80 && transport.fault === ""; i++) {
    sends.push(transport.send(answer).catch(() => {}));
  }
  const stopped = await settlesWithin(closed, 10_000);
  if (!stopped) await transport.close();
  await Promise.all(sends);
  assert.ok(stopped, "the server is still running");
  assert.match(
    transport.fault,
    /The MCP server stopped reading its stdin: over 67108864 bytes were waiting for it: stopped it/,
  );
});
