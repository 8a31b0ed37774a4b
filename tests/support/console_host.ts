/**
 * A host over a temporary skills folder of small fixture tools and skills,
 * with its run store in a temporary folder, for the console tests and bench.
 *
 * @module
 */

import { join } from "node:path";
import { createHost, type Host } from "../../runtime/host.ts";
import { defaultConfig } from "../../runtime/config.ts";
import type { HostConfig } from "../../runtime/config_schema.ts";

/** Fixture modules, by file name. */
export const FIXTURES: Record<string, string> = {
  "add.ts":
    `export default { kind: "tool", name: "add", description: "Add two numbers",
  input: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  run(args, ctx) { ctx.progress(50, "adding"); return { sum: args.a + args.b }; } };`,
  "echo.ts":
    `export default { kind: "tool", name: "echo", description: "Echo the arguments back",
  input: { type: "object" }, run(args) { return args; } };`,
  "fail.ts":
    `export default { kind: "tool", name: "fail", description: "Always throws",
  input: { type: "object" }, run() { throw new Error("it broke"); } };`,
  "spin.ts":
    `export default { kind: "tool", name: "spin", description: "Spins forever",
  input: { type: "object" }, run() { while (true) {} } };`,
  "wait.ts":
    `export default { kind: "tool", name: "wait", description: "Waits until cancelled",
  input: { type: "object" }, run(_a, ctx) { ctx.status("waiting"); return new Promise(() => {}); } };`,
  "oom.ts":
    `export default { kind: "tool", name: "oom", description: "Exhausts the heap",
  input: { type: "object" }, run() { const h = []; while (true) h.push(new Array(1e6).fill(h.length)); } };`,
  "netty.ts":
    `export default { kind: "tool", name: "netty", description: "Needs the network",
  permissions: { net: ["example.com"] }, input: { type: "object" }, run() { return 1; } };`,
  "vault.ts":
    `export default { kind: "toolkit", name: "vault", description: "Holds a secret",
  config: { type: "object", properties: { token: { type: "string", secret: true } }, required: ["token"] } };`,
  "leak.ts":
    `export default { kind: "tool", name: "leak", toolkit: "vault", description: "Returns its secret",
  input: { type: "object" }, run(_a, ctx) { ctx.status("have " + ctx.config.token); return { said: "the token is " + ctx.config.token }; } };`,
  "steps.ts":
    `export default { kind: "skill", name: "steps", description: "Adds, then asks the model, with progress",
  tools: ["add"], timeout_seconds: 60,
  input: { type: "object", properties: { pause_ms: { type: "number" } } },
  async run(args, ctx) {
    const pause = args.pause_ms ?? 0;
    for (let i = 1; i <= 4; i++) {
      ctx.progress(i * 20, "step " + i);
      await new Promise((r) => setTimeout(r, pause));
    }
    const sum = await ctx.tools.call("add", { a: 2, b: 3 });
    let text = "";
    try {
      text = (await ctx.llm.chat({ messages: [{ role: "user", content: "hi" }] })).text;
    } catch (e) { text = "no llm: " + e.message; }
    ctx.progress(100, "done");
    return { sum, text };
  } };`,
};

/** Options of {@link fixtureHost}. */
export interface FixtureHostOptions {
  /** The store section; `undefined` puts it in the temp folder. */
  store?: HostConfig["store"];
  /** Auth tokens. @default [] */
  tokens?: string[];
  /** Console admin tokens (each also in `tokens`). @default [] */
  adminTokens?: string[];
  /** LLM entries. @default [] */
  llm?: HostConfig["llm"];
  /** Toolkit configurations. @default {} */
  toolkits?: HostConfig["toolkits"];
  /** Receives the host's log lines. */
  log?: (line: string) => void;
  /** Reuse this folder (a restart). */
  dir?: string;
  /** Serve skillbox's shipped skills too. @default false */
  builtin?: boolean;
}

/** A fixture host and its folder. */
export interface FixtureHost extends AsyncDisposable {
  host: Host;
  /** The temporary folder (skills in `skills/`, the store in `store/`). */
  dir: string;
  /** The store file. */
  dbPath: string;
}

/**
 * Creates a host over the fixtures, waiting until they are loaded.
 *
 * @param options store, tokens, LLM, toolkits
 * @returns the host; disposing closes it and removes the folder
 */
export async function fixtureHost(
  options: FixtureHostOptions = {},
): Promise<FixtureHost> {
  const dir = options.dir ??
    await Deno.makeTempDir({ prefix: "skillbox_console_" });
  const skills = join(dir, "skills");
  await Deno.mkdir(skills, { recursive: true });
  for (const [name, source] of Object.entries(FIXTURES)) {
    await Deno.writeTextFile(join(skills, name), source);
  }
  const dbPath = join(dir, "store", "runs.db");
  const base = defaultConfig();
  const host = createHost({
    config: {
      skills: [skills],
      builtinSkills: options.builtin ?? false,
      tokens: options.tokens ?? [],
      console: { adminTokens: options.adminTokens ?? [] },
      llm: options.llm ?? [],
      toolkits: options.toolkits ?? {},
      sandbox: { ...base.sandbox, cacheDir: null },
      store: options.store === undefined
        ? { path: dbPath, maxRuns: 10_000, maxAgeDays: 30 }
        : options.store,
    },
    log: options.log,
  });
  const report = await host.ready;
  if (report.errors.length > 0) {
    throw new Error(
      `fixtures failed to load: ${JSON.stringify(report.errors)}`,
    );
  }
  let disposed = false;
  return {
    host,
    dir,
    dbPath,
    async [Symbol.asyncDispose]() {
      if (disposed) return;
      disposed = true;
      await host.close({ timeoutSeconds: 1 });
      if (!options.dir) {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
}

/**
 * GETs a path from the host in-process and parses the JSON.
 *
 * @param host the host
 * @param path e.g. `/api/runs`
 * @param headers request headers
 * @returns the parsed body
 */
export async function getJson(
  host: Host,
  path: string,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const res = await host.fetch(
    new Request(`http://127.0.0.1${path}`, { headers }),
  );
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return await res.json();
}
