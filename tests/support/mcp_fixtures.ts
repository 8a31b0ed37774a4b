/**
 * Skills folders for the MCP end-to-end tests and bench: tools that echo,
 * report progress, fail, wait for cancellation, and a deferred one; and the
 * sandbox settings the tests' hosts run them with.
 *
 * @module
 */

import { join } from "node:path";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

/**
 * A client's MCP `initialize` request, as raw JSON-RPC.
 *
 * @param client the client's name
 * @param id the request's id
 * @returns the request
 */
export function initializeRequest(client: string, id = 1) {
  return {
    jsonrpc: "2.0" as const,
    id,
    method: "initialize" as const,
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: client, version: "1" },
    },
  };
}

/** The tool modules, by file name. */
export function toolFiles(markers: string): Record<string, string> {
  return {
    "echo.ts": `export default {
  kind: "tool", name: "echo", description: "Returns its input unchanged",
  idempotent: true,
  input: { type: "object", properties: { text: { type: "string" } } },
  run: (args) => args,
};`,
    "steps.ts": `export default {
  kind: "tool", name: "steps", description: "Counts steps, reporting progress",
  input: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
  output: { type: "object", properties: { done: { type: "integer" } }, required: ["done"] },
  async run(args, ctx) {
    for (let i = 1; i <= args.n; i++) {
      ctx.progress(Math.round((i / args.n) * 100), "step " + i);
      await new Promise((r) => setTimeout(r, 5));
    }
    ctx.log("warn", "all steps done");
    return { done: args.n };
  },
};`,
    "explode.ts": `export default {
  kind: "tool", name: "explode", description: "Always fails",
  run() { throw new Error("Kaboom on purpose"); },
};`,
    "wait_for_abort.ts": `export default {
  kind: "tool", name: "wait_for_abort", description: "Works until cancelled",
  permissions: { write: [${JSON.stringify(markers)}] },
  input: { type: "object", properties: { marker: { type: "string" } }, required: ["marker"] },
  async run(args, ctx) {
    ctx.progress(1, "started");
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    await Deno.writeTextFile(args.marker, "aborted");
    return "cancelled";
  },
};`,
    "hold.ts": `export default {
  kind: "tool", name: "hold", description: "Says it started, then works until cancelled, silently",
  permissions: { write: [${JSON.stringify(markers)}] },
  input: { type: "object", properties: { started: { type: "string" }, marker: { type: "string" } }, required: ["started", "marker"] },
  async run(args, ctx) {
    await Deno.writeTextFile(args.started, "started");
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    await Deno.writeTextFile(args.marker, "aborted");
    return "cancelled";
  },
};`,
    "quasar.ts": `export default {
  kind: "tool", name: "quasar_lookup",
  description: "Looks up the luminosity of a quasar by its catalogue designation",
  defer_loading: true,
  input: { type: "object", properties: { designation: { type: "string" } }, required: ["designation"] },
  run: (args) => ({ designation: args.designation, luminosity: 42 }),
};`,
    "greet/SKILL.md": `---
name: greet
description: Greets someone warmly.
version: 1.0.0
triggers:
  - greet someone
when_to_use: When a greeting is needed.
argument-hint: a name
---
Greet the person named in the arguments in one short sentence.
`,
  };
}

/** Writes the fixtures into a fresh folder. */
export async function writeFixtures(dir: string, markers: string) {
  for (const [name, text] of Object.entries(toolFiles(markers))) {
    const path = join(dir, name);
    await Deno.mkdir(join(path, ".."), { recursive: true });
    await Deno.writeTextFile(path, text);
  }
}

/** Resolves once `path` exists and holds text, watching its folder (bounded). */
export async function created(path: string, ms: number): Promise<void> {
  const watcher = Deno.watchFs(join(path, ".."));
  const timer = setTimeout(() => watcher.close(), ms);
  const written = async () => {
    try {
      return (await Deno.readTextFile(path)) !== "";
    } catch {
      return false;
    }
  };
  try {
    if (await written()) return;
    // Creation and the write are separate events: wait for the text.
    for await (const event of watcher) {
      if (event.paths.includes(path) && await written()) return;
    }
    throw new Error(`"${path}" was not written within ${ms} ms`);
  } finally {
    clearTimeout(timer);
    try {
      watcher.close();
    } catch { /* closed by the timer */ }
  }
}

/**
 * The sandbox settings of a test host: no compile cache shared between
 * tests, a few warm processes, and results up to 1 MiB. A fresh object each
 * call, so one test's host never sees another's changes.
 *
 * @returns the `sandbox` part of a host config
 */
export function testSandbox() {
  return {
    cacheDir: null,
    memoryMb: 256,
    maxIdleProcesses: 8,
    spareWorkers: 1,
    maxResultBytes: 1 << 20,
  };
}
