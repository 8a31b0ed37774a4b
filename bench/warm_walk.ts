/**
 * Which of the project's files a warm tool call enters in the host, found by
 * measurement rather than by reading the code (`docs/architecture.md` walks
 * the same call by hand, and a hand count misses wiring and helpers).
 *
 * A host is started the way `deno run host` starts it, with one no-op
 * drop-in tool and V8 coverage on (`--coverage`), and a client makes warm
 * calls to it over one WebSocket. That is done twice, with `base` and with
 * `base + calls` calls; a function whose call count grew by at least 90 % of
 * `calls` between the two runs runs on every call (or more often). A file
 * with such a function is on the walk. Two runs diffed make start-up,
 * handshakes and timers cancel out; a periodic timer (the run store's flush
 * every 100 ms) runs far fewer times than the calls and drops out, while the
 * per-run work the flush does (a row per call) stays in.
 *
 * Coverage counts are exact, so the list is the same on a busy or a quiet
 * machine. The sandbox process is not covered (it runs with a cleared
 * environment, confined); `docs/architecture.md` names its files.
 *
 * Run alone: `deno run -A bench/warm_walk.ts [calls]`.
 *
 * @module
 */

// A bench prints its figures when run alone.
// deno-lint-ignore-file no-console

import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { HOST_FLAGS, HOST_MAIN } from "../tests/support/host_cli.ts";
import type { Bench } from "./main.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const NOOP_TOOL =
  `export default { kind: "tool", name: "noop", description: "Does nothing", input: { type: "object" }, run() { return { ok: true }; } };\n`;

/**
 * One project file a warm call enters, with what runs there per call.
 *
 * @example
 * ```ts
 * import type { WalkFile } from "./warm_walk.ts";
 * const file: WalkFile = {
 *   path: "runtime/session.ts",
 *   functions: [{ name: "send", perCall: 1 }],
 * };
 * console.assert(file.functions.length === 1);
 * ```
 */
export interface WalkFile {
  /** The file's path in the repository (`runtime/session.ts`). */
  path: string;
  /** Its functions that ran at least once per call, with runs per call. */
  functions: { name: string; perCall: number }[];
}

/** A function's call counts in one coverage run, by file, then by function. */
type Counts = Map<string, Map<string, { name: string; count: number }>>;

/**
 * Which project files a function ran in at least `threshold` more times in
 * `after` than in `before`.
 *
 * @param before counts of the run with fewer calls
 * @param after counts of the run with `calls` more calls
 * @param calls how many more calls `after` made
 * @returns the files on the walk, sorted by path
 * @example Only what grew with the calls counts
 * ```ts
 * import { walkOf } from "./warm_walk.ts";
 * import assert from "node:assert/strict";
 * const run = (n: number) => new Map([
 *   ["runtime/a.ts", new Map([["f@0", { name: "f", count: 2 * n }],
 *     ["g@9", { name: "g", count: 3 }]])],
 *   ["runtime/b.ts", new Map([["h@0", { name: "h", count: 5 }]])],
 * ]);
 * assert.deepEqual(walkOf(run(10), run(110), 100), [
 *   { path: "runtime/a.ts", functions: [{ name: "f", perCall: 2 }] },
 * ]);
 * ```
 */
export function walkOf(
  before: Counts,
  after: Counts,
  calls: number,
): WalkFile[] {
  const walk: WalkFile[] = [];
  for (const [path, functions] of after) {
    const earlier = before.get(path);
    const hot = [];
    for (const [key, { name, count }] of functions) {
      const grew = count - (earlier?.get(key)?.count ?? 0);
      if (grew >= 0.9 * calls) {
        hot.push({ name, perCall: Math.round((grew / calls) * 10) / 10 });
      }
    }
    if (hot.length > 0) {
      hot.sort((a, b) => b.perCall - a.perCall || a.name.localeCompare(b.name));
      walk.push({ path, functions: hot });
    }
  }
  return walk.sort((a, b) => a.path.localeCompare(b.path));
}

// V8's raw coverage files of one run: per project file, each function's
// call count (the first range of a function is its whole body).
async function readCoverage(dir: string): Promise<Counts> {
  const counts: Counts = new Map();
  const root = new URL(`file://${ROOT}`).href;
  for await (const entry of Deno.readDir(dir)) {
    const script = JSON.parse(
      await Deno.readTextFile(join(dir, entry.name)),
    ) as {
      url: string;
      functions: {
        functionName: string;
        ranges: { startOffset: number; count: number }[];
      }[];
    };
    if (!script.url.startsWith(root)) continue;
    const path = script.url.slice(root.length);
    const functions = counts.get(path) ?? new Map();
    for (const fn of script.functions) {
      const range = fn.ranges[0];
      if (range === undefined) continue;
      const key = `${fn.functionName}@${range.startOffset}`;
      const known = functions.get(key);
      // A module loaded in two isolates shows twice: keep the larger.
      if (known === undefined || known.count < range.count) {
        functions.set(key, {
          name: fn.functionName || "(anonymous)",
          count: range.count,
        });
      }
    }
    counts.set(path, functions);
  }
  return counts;
}

// The host's A2E WebSocket URL, read from the banner it prints on stderr
// once it listens (`--port 0`: the system picks the port). The rest of
// stderr is drained so the host never blocks on it.
async function listeningUrl(host: Deno.ChildProcess): Promise<string> {
  const lines = host.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (true) {
    const { done, value } = await lines.read();
    if (done) throw new Error(`The host exited before listening: ${seen}`);
    seen += value;
    const url = /skillbox listening: (ws:\/\/\S+\/a2e)/.exec(seen)?.[1];
    if (url !== undefined) {
      (async () => {
        while (!(await lines.read()).done);
      })().catch(() => {});
      return url;
    }
  }
}

async function warmCalls(url: string, calls: number): Promise<void> {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  const answered = (id: string) =>
    new Promise<void>((resolve, reject) => {
      socket.onmessage = (event) => {
        const message = JSON.parse(String(event.data));
        if (message.type === "error") reject(new Error(event.data));
        if (message.req_id === id && message.type !== "tool/event") {
          if (message.type === "tool/call/resp" && !message.data?.success) {
            reject(new Error(`The no-op call failed: ${event.data}`));
          }
          resolve();
        }
      };
    });
  const send = (body: Record<string, unknown>) => {
    const id = crypto.randomUUID();
    const done = answered(id);
    socket.send(
      JSON.stringify({ id, version: "1.0", ts: Date.now() / 1000, ...body }),
    );
    return done;
  };
  await send({ type: "handshake/req", agent_caps: ["tools"] });
  for (let i = 0; i < calls; i++) {
    await send({ type: "tool/call/req", tool_name: "noop", arguments: {} });
  }
  const closed = new Promise((resolve) => socket.onclose = resolve);
  socket.close();
  await closed;
}

// One host run with coverage: start, make `calls` warm calls (after the
// first, cold one), stop with SIGINT so coverage is written, read it.
async function coveredRun(
  calls: number,
  config: Record<string, unknown>,
): Promise<Counts> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_walk_" });
  try {
    const tools = join(dir, "tools");
    await Deno.mkdir(tools);
    await Deno.writeTextFile(join(tools, "noop.ts"), NOOP_TOOL);
    const configFile = join(dir, "skillbox.jsonc");
    await Deno.writeTextFile(
      configFile,
      JSON.stringify({ store: { path: join(dir, "runs.db") }, ...config }),
    );
    const host = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        `--coverage=${join(dir, "coverage")}`,
        ...HOST_FLAGS,
        HOST_MAIN,
        ...["--port", "0", "--skills", tools, "--config", configFile],
      ],
      cwd: ROOT,
      stdout: "null",
      stderr: "piped",
    }).spawn();
    try {
      await warmCalls(await listeningUrl(host), calls + 1);
    } finally {
      try {
        host.kill("SIGINT");
      } catch {
        // It exited already (the error above says why).
      }
      await host.status;
    }
    return await readCoverage(join(dir, "coverage"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * The project files a warm no-op tool call enters in the host.
 *
 * @param calls the calls the second run makes more than the first
 * @param config more of the host's `skillbox.jsonc` (snake_case), for
 * example `mcp_servers`; the run store is in a temporary folder
 * @returns the files on the walk, sorted by path
 * @example List the files (starts two hosts: seconds)
 * ```ts ignore
 * import { hostWalk } from "./warm_walk.ts";
 * for (const file of await hostWalk(500)) console.log(file.path);
 * ```
 */
export async function hostWalk(
  calls = 1000,
  config: Record<string, unknown> = {},
): Promise<WalkFile[]> {
  const base = 100;
  const before = await coveredRun(base, config);
  const after = await coveredRun(base + calls, config);
  return walkOf(before, after, calls);
}

function report(walk: WalkFile[]): string[] {
  const runtime = walk.filter((f) => f.path.startsWith("runtime/")).length;
  const protocol = walk.filter((f) => f.path.startsWith("protocol/")).length;
  return [
    `host files a warm call enters: ${walk.length} (runtime/ ${runtime}, protocol/ ${protocol}, other ${
      walk.length - runtime - protocol
    })`,
    ...walk.map((f) =>
      `${f.path}: ${
        f.functions.map((fn) => `${fn.name}×${fn.perCall}`).join(", ")
      }`
    ),
  ];
}

/**
 * The warm-walk bench for `deno task bench` (`deno task bench warm_walk`).
 *
 * @example Print its lines
 * ```ts ignore
 * import { warmWalkBench } from "./warm_walk.ts";
 * for (const line of await warmWalkBench.run()) console.log(line);
 * ```
 */
export const warmWalkBench: Bench = {
  name: "warm_walk",
  async run() {
    return report(await hostWalk());
  },
};

if (import.meta.main) {
  const calls = Number(Deno.args[0] ?? 1000);
  for (const line of report(await hostWalk(calls))) console.log(line);
}
