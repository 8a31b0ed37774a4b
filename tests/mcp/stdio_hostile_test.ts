/**
 * A hostile client on `deno run host --mcp`: a line that is not JSON, a
 * line over `limits.max_message_bytes` and a JSON value that is no message
 * each get a clear answer or are ignored, and the session goes on serving.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { LineSplitter } from "../../protocol/lines.ts";
import { initializeRequest } from "../support/mcp_fixtures.ts";
import { stdioHostArgs } from "../support/mcp_client.ts";

Deno.test("MCP over stdio: bad lines get JSON-RPC errors and the session goes on", async () => {
  const dir = await Deno.makeTempDir();
  const config = join(dir, "skillbox.json");
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      skills: [],
      builtin_skills: false,
      sandbox: { cache_dir: null },
      limits: { max_message_bytes: 4096 },
    }),
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: stdioHostArgs(config),
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const answers: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  const splitter = new LineSplitter((line) => {
    answers.push(JSON.parse(new TextDecoder().decode(line)));
    waiters.splice(0).forEach((wake) => wake());
  });
  const reading = (async () => {
    for await (const chunk of child.stdout) splitter.push(chunk);
  })();
  // Resolves with the first answer that matches, waiting for more lines;
  // fails when none has come within a bound (the host stays silent).
  const answer = async (match: (a: Record<string, unknown>) => boolean) => {
    const bound = AbortSignal.timeout(20_000);
    while (true) {
      const found = answers.find(match);
      if (found) return found;
      if (bound.aborted) throw new Error("No such answer within 20 s");
      await new Promise<void>((wake) => {
        waiters.push(wake);
        bound.addEventListener("abort", () => wake(), { once: true });
      });
    }
  };
  const writer = child.stdin.getWriter();
  const send = (line: string) =>
    writer.write(new TextEncoder().encode(line + "\n"));
  try {
    await send(JSON.stringify(initializeRequest("hostile")));
    await answer((a) => a.id === 1);
    await send(JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/initialized",
    }));

    await send("{not json");
    const parse = await answer((a) => a.id === null) as {
      error: { code: number; message: string };
    };
    assert.equal(parse.error.code, -32700);
    assert.match(parse.error.message, /^Parse error: /);

    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "x".repeat(8000),
    });
    await send(big);
    const large = await answer((a) =>
      a.id === null && (a.error as { code: number }).code === -32600
    ) as { error: { message: string } };
    assert.equal(
      large.error.message,
      `Message too large: ${big.length} bytes (limit 4096)`,
    );

    // JSON that is no JSON-RPC message: ignored (and logged), not fatal.
    await send("[1, 2, 3]");
    await send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }));
    const list = await answer((a) => a.id === 3) as {
      result: { tools: { name: string }[] };
    };
    assert.ok(Array.isArray(list.result.tools));
    assert.equal(answers.filter((a) => a.id === null).length, 2);
  } finally {
    await writer.close().catch(() => {});
    const status = await child.status;
    await reading;
    await Deno.remove(dir, { recursive: true });
    assert.equal(status.code, 0, "the host exits cleanly when stdin closes");
  }
});
