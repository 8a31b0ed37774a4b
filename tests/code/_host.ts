/**
 * A real host for the code-mode tests and bench: the shipped skills
 * (`run_code`, the filesystem toolkit, `csv_profile`) plus small fixture
 * tools and skills, with its run store in a temporary folder.
 *
 * @module
 */

import { join } from "node:path";
import { createHost, type Host } from "../../runtime/host.ts";
import { defaultConfig } from "../../runtime/config.ts";
import type { HostConfig } from "../../runtime/config_schema.ts";

/** Fixture modules, by file name. */
export const CODE_FIXTURES: Record<string, string> = {
  "inc.ts":
    `export default { kind: "tool", name: "inc", description: "Adds one to n",
  input: { type: "object", properties: { n: { type: "number" } }, required: ["n"], additionalProperties: false },
  run(args) { return { n: args.n + 1 }; } };`,
  "secret_tool.ts":
    `export default { kind: "tool", name: "secret_tool", description: "Denied by the policy",
  input: { type: "object" }, run() { return { secret: "should never run" }; } };`,
  "chatty.ts":
    `export default { kind: "tool", name: "chatty", description: "Reports progress and a log line",
  input: { type: "object", properties: { more: { type: "number" } } },
  run(args, ctx) { ctx.progress(50, "half way"); ctx.log("info", "chatty says hi");
    for (let i = 0; i < (args.more ?? 0); i++) ctx.progress(50, "again");
    return { done: true }; } };`,
  "wait.ts":
    `export default { kind: "tool", name: "wait", description: "Waits until cancelled",
  input: { type: "object" }, run(_a, ctx) { ctx.status("waiting"); return new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("aborted")))); } };`,
  "nap.ts":
    `export default { kind: "tool", name: "nap", description: "Sleeps ms milliseconds",
  input: { type: "object", properties: { ms: { type: "number" } }, required: ["ms"] },
  async run(args) { await new Promise((r) => setTimeout(r, args.ms)); return { slept: args.ms }; } };`,
  "big.ts":
    `export default { kind: "tool", name: "big", description: "Returns a string of size characters",
  input: { type: "object", properties: { size: { type: "number" }, bare: { type: "boolean" }, control: { type: "number" }, summary: { type: "number" } }, required: ["size"] },
  run(args) { const text = "x".repeat(args.size) + "\\u0001".repeat(args.control ?? 0);
    if (args.summary) return { __skillbox_output: true, data: { text }, summary: "s".repeat(args.summary) };
    return args.bare ? text : { text }; } };`,
  "nest.ts":
    `export default { kind: "skill", name: "nest", description: "Tries to run code from inside a skill",
  tools: ["run_code", "inc"], timeout_seconds: 30,
  input: { type: "object" },
  async run(_args, ctx) {
    const inc = await ctx.tools.call("inc", { n: 1 });
    try {
      await ctx.tools.call("run_code", { code: "await tools.inc({ n: 41 })" });
      return { inc, nested: "ran" };
    } catch (e) { return { inc, nested: "refused: " + e.message }; }
  } };`,
  "forger.ts":
    `const forged = (id) => JSON.stringify({ t: "op", op: "call", id, export: "helper",
  path: "/x", version: "x", args: {}, config: {}, metadata: {}, session: "other-session", call: id });
export default { kind: "skill", name: "forger", description: "Feeds its worker a forged operation",
  tools: ["inc"], timeout_seconds: 30, input: { type: "object" },
  async run(_args, ctx) {
    // The forged operation's ctx makes an RPC under an id the sandbox's
    // main thread never gave this worker.
    dispatchEvent(new MessageEvent("message", { data: forged("forged-op") }));
    const real = await ctx.tools.call("inc", { n: 1 });
    return { forged_posted: globalThis.__forgedPosted === true, real };
  } };
export const helper = { kind: "skill", name: "forger_helper", description: "Called only by a forged operation",
  tools: ["inc"], input: { type: "object" },
  run(_args, ctx) {
    const pending = ctx.tools.call("inc", { n: 99 });
    globalThis.__forgedPosted = true;
    return pending;
  } };`,
  "big_skill.ts":
    `export default { kind: "skill", name: "big_skill", description: "Returns a string of size characters, then control ones",
  input: { type: "object", properties: { size: { type: "number" }, control: { type: "number" } }, required: ["size"] },
  run(args) { return "x".repeat(args.size) + "\\u0001".repeat(args.control ?? 0); } };`,
  "args_shape.ts":
    `export default { kind: "tool", name: "args_shape", description: "Says what its arguments are",
  input: {}, run(args) { return { array: Array.isArray(args), type: typeof args }; } };`,
  "args_shape_skill.ts":
    `export default { kind: "skill", name: "args_shape_skill", description: "Says what its arguments are",
  input: {}, run(args) { return { array: Array.isArray(args), type: typeof args }; } };`,
  "steps.ts":
    `export default { kind: "skill", name: "steps", description: "Adds one twice, with progress",
  tools: ["inc"], timeout_seconds: 30,
  input: { type: "object", properties: { n: { type: "number" } } },
  async run(args, ctx) {
    ctx.progress(50, "stepping");
    const a = await ctx.tools.call("inc", { n: args.n ?? 0 });
    return await ctx.tools.call("inc", { n: a.n });
  } };`,
};

/** Options of {@link codeHost}. */
export interface CodeHostOptions {
  /** Auth tokens. @default [] */
  tokens?: string[];
  /** The `policy` section. @default { permissions: { read: [dir] } } */
  policy?: Record<string, unknown>;
  /** `code.max_calls`. @default 1000 */
  maxCalls?: number;
  /** `limits` overrides. */
  limits?: Partial<HostConfig["limits"]>;
  /** Keep a run store. @default true */
  store?: boolean;
}

/** A code-mode host and its folder. */
export interface CodeHost extends AsyncDisposable {
  host: Host;
  /** `ws://127.0.0.1:PORT/a2e` */
  wsUrl: string;
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** The temporary folder (`skills/`, `store/`, `data/`). */
  dir: string;
  /** A folder the policy lets tools read (`data/`). */
  data: string;
}

/**
 * Starts a listening host over the shipped skills and the fixtures.
 *
 * @param options tokens, policy, limits
 * @returns the host; disposing closes it and removes the folder
 */
export async function codeHost(
  options: CodeHostOptions = {},
): Promise<CodeHost> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_code_" });
  const skills = join(dir, "skills");
  const data = join(dir, "data");
  await Deno.mkdir(skills, { recursive: true });
  await Deno.mkdir(data, { recursive: true });
  for (const [name, source] of Object.entries(CODE_FIXTURES)) {
    await Deno.writeTextFile(join(skills, name), source);
  }
  const base = defaultConfig();
  const host = createHost({
    config: {
      skills: [skills],
      builtinSkills: true,
      tokens: options.tokens ?? [],
      // Every token sees every run in the console (the tests read them).
      console: { adminTokens: options.tokens ?? [] },
      sandbox: { ...base.sandbox, cacheDir: null, memoryMb: 256 },
      limits: { ...base.limits, shutdownTimeoutSeconds: 1, ...options.limits },
      policy: options.policy ?? { permissions: { read: [data] } },
      store: options.store === false ? null : {
        path: join(dir, "store", "runs.db"),
        maxRuns: 10_000,
        maxAgeDays: 30,
      },
      code: { maxCalls: options.maxCalls ?? 1000 },
    },
  });
  const report = await host.ready;
  if (report.errors.length > 0) {
    await host.close({ timeoutSeconds: 1 });
    throw new Error(
      `fixtures failed to load: ${JSON.stringify(report.errors)}`,
    );
  }
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  return {
    host,
    url,
    wsUrl: url.replace("http", "ws") + "/a2e",
    dir,
    data,
    async [Symbol.asyncDispose]() {
      await host.close({ timeoutSeconds: 1 });
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/**
 * Reads until `ok` holds: the run store writes in batches off the call's
 * path, so what a test asks of it shows up a little later. Bounded (10 s).
 */
export async function until<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await read();
    if (ok(value)) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("The condition never held");
}
