/**
 * skillbox as an MCP server, end to end: the official SDK's `Client` over
 * Streamable HTTP (and stdio, in `stdio_e2e_test.ts`) against a real host
 * with real sandboxes and a mock LLM provider.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type CallToolResult,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
  type Progress,
  type Prompt,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startMockOpenAI } from "../support/mock_openai.ts";
import { created } from "../support/mcp_fixtures.ts";
import { text, withHost } from "./_host.ts";
import { connectMcp } from "../support/mcp_client.ts";

Deno.test("MCP over HTTP lists tools with schemas, titles and annotations, and skills and prompts", async () => {
  await withHost({}, async ({ url }) => {
    const client = await connectMcp(url);
    const { tools } = await client.listTools();
    const names = tools.map((t: Tool) => t.name).sort();
    assert.deepEqual(names, [
      "configure_toolkit",
      "echo",
      "explode",
      "greet",
      "hold",
      "search_tools",
      "steps",
      "wait_for_abort",
    ]);
    const echo = tools.find((t: Tool) => t.name === "echo")!;
    assert.equal(echo.title, "Echo");
    assert.deepEqual(echo.inputSchema.properties, { text: { type: "string" } });
    assert.equal(echo.annotations?.idempotentHint, true);
    assert.equal(echo.annotations?.readOnlyHint, true);
    const wait = tools.find((t: Tool) => t.name === "wait_for_abort")!;
    assert.equal(wait.annotations?.readOnlyHint, false);
    assert.equal(wait.annotations?.destructiveHint, true);
    const steps = tools.find((t: Tool) => t.name === "steps")!;
    assert.deepEqual(steps.outputSchema?.required, ["done"]);
    const greet = tools.find((t: Tool) => t.name === "greet")!;
    assert.match(greet.description ?? "", /^Skill: Greets someone warmly/);
    assert.match(greet.description ?? "", /When to use: When a greeting/);

    const { prompts } = await client.listPrompts();
    assert.deepEqual(prompts.map((p: Prompt) => p.name), ["greet"]);
    const prompt = await client.getPrompt({ name: "greet" });
    const message = prompt.messages[0]!.content;
    assert.equal(message.type, "text");
    assert.match(
      message.type === "text" ? message.text : "",
      /Greet the person/,
    );
    await client.close();
  });
});

Deno.test("MCP over HTTP calls a tool with progress before the result, and a failure is an isError result", async () => {
  await withHost({}, async ({ url }) => {
    const client = await connectMcp(url);
    const order: string[] = [];
    const progress: Progress[] = [];
    const logs: LoggingMessageNotification["params"][] = [];
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n: LoggingMessageNotification) => {
        logs.push(n.params);
      },
    );
    const result = await client.callTool(
      { name: "steps", arguments: { n: 4 } },
      undefined,
      {
        onprogress: (p: Progress) => {
          order.push("progress");
          progress.push(p);
        },
      },
    ) as CallToolResult;
    order.push("result");
    assert.deepEqual(result.structuredContent, { done: 4 });
    assert.equal(JSON.parse(text(result)).done, 4);
    assert.deepEqual(progress.map((p) => p.progress), [25, 50, 75, 100]);
    assert.equal(progress[0]!.message, "step 1");
    assert.deepEqual(order, [
      "progress",
      "progress",
      "progress",
      "progress",
      "result",
    ]);
    assert.ok(
      logs.some((l) => l.level === "warning" && l.data === "all steps done"),
      JSON.stringify(logs),
    );

    const failed = await client.callTool({
      name: "explode",
      arguments: {},
    }) as CallToolResult;
    assert.equal(failed.isError, true);
    assert.match(text(failed), /Kaboom on purpose.*\(tool_error\)/);

    const unknown = await client.callTool({
      name: "nope",
      arguments: {},
    }) as CallToolResult;
    assert.equal(unknown.isError, true);
    assert.match(text(unknown), /unknown_tool/);

    const invalid = await client.callTool({
      name: "steps",
      arguments: { n: "x" },
    }) as CallToolResult;
    assert.equal(invalid.isError, true);
    assert.match(text(invalid), /schema_violation/);
    await client.close();
  });
});

Deno.test("a quick call without a progress token is answered as one JSON body; a call that logs, or asks for progress, streams", async () => {
  await withHost({}, async ({ url }) => {
    const types: string[] = [];
    // Sees each answer's content type on its way to the SDK client.
    const recording = async (u: string | URL, init?: RequestInit) => {
      const res = await fetch(u, init);
      if (init?.method === "POST") {
        types.push(res.headers.get("content-type") ?? "");
      }
      return res;
    };
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url + "/mcp"), {
        fetch: recording,
      }),
    );
    const order: string[] = [];
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n: LoggingMessageNotification) => {
        if (n.params.data === "all steps done") order.push("log");
      },
    );
    // The first call loads the catalog and starts a sandbox: warm up, so the
    // next is well within the time a JSON answer may take.
    await client.callTool({ name: "echo", arguments: {} });
    types.length = 0;
    const echo = await client.callTool({
      name: "echo",
      arguments: { text: "quick" },
    }) as CallToolResult;
    assert.deepEqual(echo.structuredContent, { text: "quick" });
    assert.deepEqual(types, ["application/json"]);
    // Its log message comes before its result, on the call's own stream.
    const steps = await client.callTool({
      name: "steps",
      arguments: { n: 2 },
    }) as CallToolResult;
    order.push("result");
    assert.deepEqual(steps.structuredContent, { done: 2 });
    assert.deepEqual(order, ["log", "result"]);
    assert.deepEqual(types, ["application/json", "text/event-stream"]);
    await client.callTool({ name: "echo", arguments: {} }, undefined, {
      onprogress: () => {},
    });
    assert.deepEqual(types.at(-1), "text/event-stream");
    await client.close();
  });
});

Deno.test("MCP cancellation stops a busy tool inside its sandbox", async () => {
  await withHost({}, async ({ url, markers }) => {
    const client = await connectMcp(url);
    const marker = join(markers, "aborted");
    const controller = new AbortController();
    const started = Promise.withResolvers<void>();
    const call = client.callTool(
      { name: "wait_for_abort", arguments: { marker } },
      undefined,
      { signal: controller.signal, onprogress: () => started.resolve() },
    );
    await started.promise;
    controller.abort("the user changed their mind");
    await assert.rejects(call);
    // The tool saw its ctx.signal abort inside the sandbox.
    await created(marker, 5000);
    assert.equal(await Deno.readTextFile(marker), "aborted");
    // And the session goes on.
    const echo = await client.callTool({
      name: "echo",
      arguments: { text: "hi" },
    }) as CallToolResult;
    assert.deepEqual(echo.structuredContent, { text: "hi" });
    await client.close();
  });
});

Deno.test("search_tools finds a deferred tool, which is then callable by name", async () => {
  await withHost({}, async ({ url }) => {
    const client = await connectMcp(url);
    const { tools } = await client.listTools();
    assert.ok(!tools.some((t: Tool) => t.name === "quasar_lookup"));
    const found = await client.callTool({
      name: "search_tools",
      arguments: { query: "quasar luminosity" },
    }) as CallToolResult;
    const hits = (found.structuredContent as {
      tools: { name: string; inputSchema: { required?: string[] } }[];
    }).tools;
    assert.equal(hits[0]?.name, "quasar_lookup");
    assert.deepEqual(hits[0]?.inputSchema.required, ["designation"]);
    const called = await client.callTool({
      name: "quasar_lookup",
      arguments: { designation: "3C 273" },
    }) as CallToolResult;
    assert.deepEqual(called.structuredContent, {
      designation: "3C 273",
      luminosity: 42,
    });
    await client.close();
  });
});

Deno.test("a skill runs as an MCP tool, its LLM tokens relayed as progress messages", async () => {
  await using mock = startMockOpenAI([{
    tokens: ["Hello ", "there, ", "Ada!"],
    token_interval_ms: 5,
  }]);
  await withHost({ llmUrl: mock.url }, async ({ url }) => {
    const client = await connectMcp(url);
    const messages: string[] = [];
    const logs: unknown[] = [];
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n: LoggingMessageNotification) => {
        logs.push(n.params.data);
      },
    );
    const result = await client.callTool(
      { name: "greet", arguments: { input: "Ada" } },
      undefined,
      { onprogress: (p: Progress) => messages.push(p.message ?? "") },
    ) as CallToolResult;
    assert.equal(result.isError, undefined, text(result));
    assert.match(text(result), /Hello there, Ada!/);
    assert.equal(messages.join(""), "Hello there, Ada!");
    assert.ok(
      logs.some((d) => (d as { kind?: string }).kind === "skill.started"),
      JSON.stringify(logs),
    );
    await client.close();
  });
});

Deno.test("/mcp refuses a client without the bearer token, and serves one with it", async () => {
  await withHost({ tokens: ["s3cret"] }, async ({ url }) => {
    await assert.rejects(connectMcp(url), /401|Unauthorized|bearer/i);
    await assert.rejects(connectMcp(url, "wrong"));
    const client = await connectMcp(url, "s3cret");
    const echo = await client.callTool({
      name: "echo",
      arguments: { text: "ok" },
    }) as CallToolResult;
    assert.deepEqual(echo.structuredContent, { text: "ok" });
    // Another token cannot ride on this session.
    const sessionId = (client.transport as StreamableHTTPClientTransport)
      .sessionId!;
    const stolen = await fetch(url + "/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    assert.equal(stolen.status, 401);
    await stolen.body?.cancel();
    await client.close();
  });
});

Deno.test("hot reload sends tools/list_changed and the new tool is listed", async () => {
  await withHost({}, async ({ url, skills }) => {
    const client = await connectMcp(url);
    await client.listTools();
    const changed = Promise.withResolvers<void>();
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed.resolve();
    });
    await Deno.writeTextFile(
      join(skills, "shout.ts"),
      `export default { kind: "tool", name: "shout", description: "Shouts",
        run: (a) => String(a.text).toUpperCase() };`,
    );
    const timer = setTimeout(
      () => changed.reject(new Error("no list_changed within 10 s")),
      10_000,
    );
    await changed.promise.finally(() => clearTimeout(timer));
    const { tools } = await client.listTools();
    assert.ok(tools.some((t: Tool) => t.name === "shout"));
    await client.close();
  });
});
