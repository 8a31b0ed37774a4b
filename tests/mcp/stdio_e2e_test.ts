/**
 * `deno run host --mcp` end to end: the official SDK's `Client` spawns the
 * host CLI over stdio (`StdioClientTransport`), lists and calls tools with
 * progress, cancels a busy one, and sees the host exit when stdin closes.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type {
  CallToolResult,
  Progress,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { created, writeFixtures } from "../support/mcp_fixtures.ts";
import { stdioHostArgs } from "../support/mcp_client.ts";

Deno.test("MCP over stdio: list, call with progress, isError, cancellation, exit on stdin close", async () => {
  const skills = await Deno.makeTempDir();
  const markers = await Deno.makeTempDir();
  await writeFixtures(skills, markers);
  // Not inside markers: the config file is kept out of every grant.
  const config = join(skills, "..", `${crypto.randomUUID()}.jsonc`);
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      skills: [skills],
      builtin_skills: false,
      sandbox: { cache_dir: null },
      policy: { permissions: { write: [markers] } },
    }),
  );
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: stdioHostArgs(config),
    stderr: "pipe",
  });
  const client = new Client({ name: "test", version: "1.0.0" });
  try {
    await client.connect(transport);
    const pid = transport.pid!;
    const { tools } = await client.listTools();
    assert.ok(tools.some((t: Tool) => t.name === "steps"));

    const progress: number[] = [];
    const result = await client.callTool(
      { name: "steps", arguments: { n: 2 } },
      undefined,
      { onprogress: (p: Progress) => progress.push(p.progress) },
    ) as CallToolResult;
    assert.deepEqual(result.structuredContent, { done: 2 });
    // The SDK's stdio client handles a notification a microtask after a
    // response read in the same chunk, so under load the last progress can
    // be dropped on the client side; the first one always leads.
    assert.equal(progress[0], 50);
    assert.ok(progress.length <= 2);

    const failed = await client.callTool({
      name: "explode",
      arguments: {},
    }) as CallToolResult;
    assert.equal(failed.isError, true);

    const marker = join(markers, "aborted");
    const controller = new AbortController();
    const started = Promise.withResolvers<void>();
    const call = client.callTool(
      { name: "wait_for_abort", arguments: { marker } },
      undefined,
      { signal: controller.signal, onprogress: () => started.resolve() },
    );
    await bounded(started.promise, 10_000, "no progress from wait_for_abort");
    controller.abort("stop");
    await assert.rejects(call);
    await created(marker, 5000);

    // Closing stdin ends the host: the process is gone afterwards.
    await client.close();
    assert.throws(() => Deno.kill(pid, "SIGCONT"));
  } finally {
    await client.close().catch(() => {});
    await Deno.remove(skills, { recursive: true });
    await Deno.remove(markers, { recursive: true });
    await Deno.remove(config);
  }
});

function bounded<T>(promise: Promise<T>, ms: number, why: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(why)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
