/**
 * `run_code` end to end with real clients: the repository's A2E client over
 * WebSocket and the official MCP SDK client over Streamable HTTP, against a
 * real host with real sandboxes and a run store.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  CallToolResult,
  Progress,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { connect } from "../../client/mod.ts";
import { getJson } from "../support/console_host.ts";
import { codeHost, until } from "./_host.ts";

type Run = Record<string, unknown>;

async function mcpClient(url: string): Promise<Client> {
  const client = new Client({ name: "code-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url + "/mcp")),
  );
  return client;
}

const CHAIN = `let x = { n: 0 };
for (let i = 0; i < 20; i++) x = await tools.inc(x);
await tools.chatty({});
console.log("chained", x.n);
x.n`;

Deno.test("the A2E client runs a chain in one run_code: value, console, calls, relayed events and child runs", async () => {
  await using t = await codeHost();
  const client = await connect(t.wsUrl);
  try {
    const events: { kind: string; data: Record<string, unknown> }[] = [];
    const outcome = await client.tools.call("run_code", { code: CHAIN }, {
      timeout: 60_000,
      onEvent: (e) => events.push({ kind: e.kind, data: e.data }),
    });
    assert.equal(outcome.success, true, JSON.stringify(outcome));
    const data = outcome.data as {
      value: number;
      console: { text: string }[];
      calls: { name: string; ok: boolean; duration_ms: number }[];
    };
    assert.equal(data.value, 20);
    assert.deepEqual(data.console.map((l) => l.text), ["chained 20"]);
    assert.equal(data.calls.length, 21);
    assert.ok(data.calls.every((c) => c.ok && c.duration_ms >= 0));
    // The inner tool's progress and log are events of the run_code call.
    const progress = events.find((e) =>
      e.kind === "progress" && e.data.tool === "chatty"
    );
    assert.equal(progress?.data.message, "half way");
    assert.ok(events.some((e) =>
      e.kind === "log" && e.data.tool === "chatty" &&
      e.data.message === "chatty says hi"
    ));
    // The history shows the 21 calls under the run_code run.
    const runs = await until(
      async () => (await getJson(t.host, "/api/runs?limit=100")).runs as Run[],
      (r) => r.some((x) => x.name === "run_code" && x.outcome === "ok"),
    );
    const parent = runs.find((r) => r.name === "run_code")!;
    const detail = await until(
      () => getJson(t.host, `/api/runs/${parent.id}`),
      (d) => (d.children as Run[]).length === 21,
    );
    const children = detail.children as Run[];
    assert.deepEqual(
      [...new Set(children.map((c) => c.name))].sort(),
      ["chatty", "inc"],
    );
    assert.ok(children.every((c) => c.parent_id === parent.id));
  } finally {
    await client.close();
  }
});

Deno.test("the A2E client reaches a skill and the session's configured toolkit from run_code", async () => {
  await using t = await codeHost();
  const root = join(t.data, "csv");
  await Deno.mkdir(root);
  await Deno.writeTextFile(join(root, "a.csv"), "x,y\n1,2\n3,4\n");
  const client = await connect(t.wsUrl);
  try {
    await client.toolkits.configure("filesystem", { root });
    const outcome = await client.tools.call("run_code", {
      code: `const text = (await tools.read_file({ path: "a.csv" })).content;
        const steps = await skills.steps({ n: 5 });
        const profile = await skills.csv_profile({ path: "a.csv" });
        ({ lines: text.trim().split("\\n").length, steps: steps.n,
           rows: profile.rows, columns: profile.columns.length })`,
    }, { timeout: 60_000 });
    assert.equal(outcome.success, true, JSON.stringify(outcome));
    const value = (outcome.data as { value: Record<string, unknown> }).value;
    assert.equal(value.lines, 3);
    assert.equal(value.steps, 7);
    assert.equal(value.rows, 2);
    assert.equal(value.columns, 2);
  } finally {
    await client.close();
  }
});

Deno.test("the MCP SDK client lists and calls run_code, with progress relayed", async () => {
  await using t = await codeHost({ store: false });
  const client = await mcpClient(t.url);
  try {
    const { tools } = await client.listTools();
    const tool = tools.find((x: Tool) => x.name === "run_code");
    assert.ok(tool, "run_code is listed");
    assert.deepEqual(tool.inputSchema.required, ["code"]);
    const progress: Progress[] = [];
    const result = await client.callTool(
      { name: "run_code", arguments: { code: CHAIN } },
      undefined,
      { onprogress: (p: Progress) => progress.push(p) },
    ) as CallToolResult;
    assert.notEqual(result.isError, true, JSON.stringify(result));
    const data = result.structuredContent as {
      value: number;
      calls: unknown[];
    };
    assert.equal(data.value, 20);
    assert.equal(data.calls.length, 21);
    assert.ok(
      progress.some((p) => p.message === "half way"),
      JSON.stringify(progress),
    );
    // A failing inner call is the code's to catch; uncaught, it says why.
    const failed = await client.callTool({
      name: "run_code",
      arguments: { code: "await tools.inc({ n: 'x' })" },
    }) as CallToolResult;
    const failedData = failed.structuredContent as { error: string | null };
    assert.match(String(failedData?.error), /n/);
  } finally {
    await client.close();
  }
});

Deno.test("an MCP client's cancellation of run_code aborts its inner call", async () => {
  await using t = await codeHost();
  const client = await mcpClient(t.url);
  try {
    const cancel = new AbortController();
    const call = client.callTool(
      {
        name: "run_code",
        arguments: { code: "await tools.wait({}); await tools.inc({ n: 1 })" },
      },
      undefined,
      { signal: cancel.signal },
    );
    await until(
      async () => (await getJson(t.host, "/api/overview")).running as Run[],
      (running) => running.some((r) => r.name === "wait"),
    );
    cancel.abort("the test cancels");
    await call.catch(() => {});
    const runs = await until(
      async () => (await getJson(t.host, "/api/runs?limit=100")).runs as Run[],
      (r) =>
        r.some((x) => x.name === "wait" && x.outcome !== "running") &&
        r.some((x) => x.name === "run_code" && x.outcome !== "running"),
    );
    const wait = runs.find((r) => r.name === "wait")!;
    assert.notEqual(wait.outcome, "ok");
    assert.match(String(wait.error), /cancel/i, JSON.stringify(wait));
    assert.equal(runs.filter((r) => r.name === "inc").length, 0);
  } finally {
    await client.close();
  }
});

Deno.test("the README's code-mode example runs as pasted and prints what it says", async () => {
  await using t = await codeHost({ store: false, policy: {} });
  // The snippet under "## Code mode", as a reader pastes it; only the
  // package name and the address point at this checkout and this host.
  const readme = await Deno.readTextFile(
    new URL("../../README.md", import.meta.url),
  );
  const section = readme.slice(readme.indexOf("## Code mode"));
  const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(snippet, "README.md has a ts block under ## Code mode");
  const program = snippet
    .replace(
      '"@skillbox/skillbox"',
      JSON.stringify(
        new URL("../../mod.ts", import.meta.url).href,
      ),
    )
    .replace("ws://127.0.0.1:8787/a2e", t.wsUrl);
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(file, program);
    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        // The project's import map, as a reader's own project would have.
        "--config",
        new URL("../../deno.json", import.meta.url).pathname,
        "--allow-net",
        "--allow-read",
        "--allow-env",
        file,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(run.stdout);
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    assert.match(out, /value: \[ 1, 4, 9, 16, 25 \]/);
    assert.match(out, /error: null/);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("the README's MCP code-mode example gives what it says", async () => {
  await using t = await codeHost({ store: false, policy: {} });
  const mcp = await mcpClient(t.url);
  try {
    const result = await mcp.callTool({
      name: "run_code",
      arguments: {
        code: "(await tools.eval_typescript({ code: '6 * 7' })).value",
      },
    }) as CallToolResult;
    assert.equal((result.structuredContent as { value: unknown }).value, 42);
  } finally {
    await mcp.close();
  }
});

Deno.test("returning or awaiting the tools object itself calls no tool", async () => {
  await using t = await codeHost({ store: false });
  const client = await connect(t.wsUrl);
  try {
    const outcome = await client.tools.call("run_code", {
      code: `const same = await tools;
const text = String(same === tools) + JSON.stringify(tools);
await tools.inc({ n: 1 });
text`,
    });
    const data = outcome.data as {
      value: unknown;
      calls: { name: string }[];
    };
    assert.equal(data.value, "true{}");
    // Only the call the code made, answered after any stray one would be.
    assert.deepEqual(data.calls.map((c) => c.name), ["inc"]);
  } finally {
    await client.close();
  }
});

Deno.test("run_code reads the session's declarations with tools.code_api and calls what they name", async () => {
  await using t = await codeHost({ store: false });
  const client = await connect(t.wsUrl);
  try {
    const outcome = await client.tools.call("run_code", {
      code: `const api = await tools.code_api({ query: "adds one" });
        const names = [...api.declarations.matchAll(/^\\s+(\\w+): \\(args/gm)].map((m) => m[1]);
        const inc = names.includes("inc") ? await tools.inc({ n: 41 }) : null;
        ({ names, declaresRunCode: /\\brun_code: /.test(api.declarations), n: inc?.n })`,
    }, { timeout: 60_000 });
    assert.equal(outcome.success, true, JSON.stringify(outcome));
    const value = (outcome.data as {
      value: { names: string[]; declaresRunCode: boolean; n: number };
    }).value;
    assert.ok(value.names.includes("inc"), JSON.stringify(value));
    // run_code is never offered to the code it runs.
    assert.equal(value.declaresRunCode, false);
    assert.equal(value.n, 42);
  } finally {
    await client.close();
  }
});
