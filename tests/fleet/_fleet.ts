/**
 * A fleet with the real engines, for the fleet tests and bench: a throwaway
 * PostgreSQL cluster, two hosts (separate `host.ts` processes) sharing it,
 * and HAProxy started with `deploy/haproxy.cfg` in front of them. A test
 * that needs it fails under `CI` when PostgreSQL or HAProxy is missing and
 * is ignored elsewhere, its name saying how to install them.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { FIXTURES } from "../support/console_host.ts";
import {
  freePort,
  postgresBin,
  startPostgres,
  type ThrowawayPostgres,
} from "../support/postgres.ts";
import { openSse, type SseStream } from "../support/sse_client.ts";
import type { Msg } from "../support/wire.ts";
import { HOST_FLAGS as FLAGS, HOST_MAIN as HOST } from "../support/host_cli.ts";

const CFG = fileURLToPath(new URL("../../deploy/haproxy.cfg", import.meta.url));

// A call that lasts as long as asked: long enough to be seen running.
const NAP = {
  "nap.ts":
    `export default { kind: "tool", name: "nap", description: "Sleeps ms milliseconds",
  input: { type: "object", properties: { ms: { type: "number" } }, required: ["ms"] },
  run(args) { return new Promise((r) => setTimeout(() => r({ slept: args.ms }), args.ms)); } };`,
};

/** The token every host accepts; it is also a console admin token. */
export const TOKEN = "fleet-token-0123456789";
/** Two more tokens every host accepts, not console admins: each sees its own runs only. */
export const TOKEN_X = "fleet-token-x-0123456789";
/** See {@link TOKEN_X}. */
export const TOKEN_Y = "fleet-token-y-0123456789";
/** The balancer's public name, in every host's `listen.allowed_hosts`. */
export const PUBLIC_NAME = "skillbox.test";
const INSTALL = "apt-get install -y postgresql haproxy";

/** One host of the fleet: its own process, restartable on its port. */
export interface FleetHost {
  /** Its `host.id`. */
  readonly id: string;
  /** `http://127.0.0.1:PORT`, direct (not through the balancer). */
  readonly url: string;
  /** Its stderr lines, this life and earlier ones. */
  readonly lines: string[];
  /** Kills it (SIGKILL: no drain, no flush). */
  kill(): Promise<void>;
  /** Starts it again (same port, config and id). */
  start(): Promise<void>;
}

/** The running fleet. */
export interface Fleet extends AsyncDisposable {
  /** `http://127.0.0.1:PORT` of HAProxy. */
  readonly balancer: string;
  /** The hosts, `h1` and `h2`. */
  readonly hosts: FleetHost[];
  /** The database cluster. */
  readonly pg: ThrowawayPostgres;
  /** The hosts' `store.url`: the fleet's database in that cluster. */
  readonly storeUrl: string;
}

/**
 * The path of `haproxy`, or null when it is not installed.
 *
 * @returns the executable
 * @example Is HAProxy here
 * ```ts ignore
 * const haproxy = haproxyBin(); // "/usr/sbin/haproxy" or null
 * ```
 */
export function haproxyBin(): string | null {
  for (const path of ["/usr/sbin/haproxy", "/usr/bin/haproxy"]) {
    try {
      Deno.statSync(path);
      return path;
    } catch {
      // not there
    }
  }
  return null;
}

/**
 * Registers a test that needs the fleet's engines (see the module doc).
 *
 * @param name the test's name
 * @param fn the test, given a running fleet
 * @example A test with a fleet
 * ```ts ignore
 * fleetTest("two hosts", async (fleet) => { await fetch(`${fleet.balancer}/health`); });
 * ```
 */
export function fleetTest(
  name: string,
  fn: (fleet: Fleet, t: Deno.TestContext) => Promise<void>,
): void {
  const missing = [
    postgresBin() === null ? "PostgreSQL" : "",
    haproxyBin() === null ? "HAProxy" : "",
  ].filter((m) => m !== "").join(" and ");
  if (missing !== "" && Deno.env.get("CI")) {
    Deno.test(name, () => {
      throw new Error(
        `${missing} not installed and CI is set: CI must install them ` +
          `(${INSTALL}; .ci/run does when they are missing)`,
      );
    });
    return;
  }
  if (missing !== "") {
    Deno.test({
      name: `${name} [IGNORED: ${missing} not installed; ${INSTALL} to run it]`,
      ignore: true,
      fn() {},
    });
    return;
  }
  Deno.test({
    name,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn(t) {
      await using fleet = await startFleet();
      try {
        await fn(fleet, t);
      } catch (error) {
        // What the hosts said: a host that died or refused is why a
        // session moved, and the assertion alone does not show it.
        const said = fleet.hosts.map((h) =>
          `--- ${h.id}, last lines:\n${h.lines.slice(-40).join("\n")}`
        ).join("\n");
        throw new Error(`${(error as Error).message}\n${said}`, {
          cause: error,
        });
      }
    },
  });
}

/**
 * Starts PostgreSQL, two hosts sharing it, and HAProxy in front.
 *
 * @param options `hosts`: how many (at most 2: the cfg names two)
 * @returns the fleet, stopped with `await using`
 * @example A fleet for a bench
 * ```ts ignore
 * await using fleet = await startFleet();
 * ```
 */
export async function startFleet(
  options: { hosts?: number } = {},
): Promise<Fleet> {
  const stack = new AsyncDisposableStack();
  try {
    const pg = await startPostgres();
    stack.defer(() => pg.close());
    const url = await pg.database();
    const work = await Deno.makeTempDir({ prefix: "skb_fleet_" });
    stack.defer(() => Deno.remove(work, { recursive: true }).catch(() => {}));
    const skills = join(work, "skills");
    await Deno.mkdir(skills);
    for (const [file, source] of Object.entries({ ...FIXTURES, ...NAP })) {
      await Deno.writeTextFile(join(skills, file), source);
    }
    const hosts: FleetHost[] = [];
    for (let i = 1; i <= (options.hosts ?? 2); i++) {
      const host = await hostProcess(work, `h${i}`, {
        builtin_skills: false,
        skills: [skills],
        tokens: [TOKEN, TOKEN_X, TOKEN_Y],
        console: { admin_tokens: [TOKEN] },
        listen: { hostname: "127.0.0.1", allowed_hosts: [PUBLIC_NAME] },
        store: { url },
        host: { id: `h${i}` },
        sandbox: { cache_dir: join(work, `cache${i}`) },
      });
      stack.defer(() => host.kill());
      hosts.push(host);
    }
    const balancer = await startHaproxy(
      hosts.map((h) => new URL(h.url).host),
      stack,
    );
    const moved = stack.move();
    return {
      balancer,
      hosts,
      pg,
      storeUrl: url,
      [Symbol.asyncDispose]: () => moved.disposeAsync(),
    };
  } catch (error) {
    await stack.disposeAsync();
    throw error;
  }
}

async function hostProcess(
  work: string,
  id: string,
  config: Record<string, unknown>,
): Promise<FleetHost> {
  const port = freePort();
  const file = join(work, `${id}.jsonc`);
  await Deno.writeTextFile(file, JSON.stringify(config));
  const lines: string[] = [];
  let child: Deno.ChildProcess | null = null;
  let reading: Promise<void> = Promise.resolve();
  const start = async () => {
    child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...FLAGS, HOST, "--config", file, "--port", String(port)],
      cwd: work,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const banner = Promise.withResolvers<void>();
    const proc = child;
    // An exit the test did not ask for is said where a failure shows it.
    proc.status.then((status) => {
      if (child === proc) {
        lines.push(
          `[host ${id} exited on its own: code ${status.code}, signal ${status.signal}]`,
        );
      }
    });
    reading = (async () => {
      let carry = "";
      for await (
        const text of proc.stderr.pipeThrough(new TextDecoderStream())
      ) {
        const parts = (carry + text).split("\n");
        carry = parts.pop() ?? "";
        for (const line of parts) {
          lines.push(line);
          if (/skillbox listening/.test(line)) banner.resolve();
        }
      }
      banner.reject(
        new Error(`Host ${id} exited before listening:\n${lines.join("\n")}`),
      );
    })();
    await banner.promise;
  };
  const kill = async () => {
    const proc = child;
    if (!proc) return;
    child = null;
    try {
      proc.kill("SIGKILL");
    } catch {
      // gone already
    }
    await proc.status;
    await reading.catch(() => {});
  };
  await start();
  return { id, url: `http://127.0.0.1:${port}`, lines, kill, start };
}

async function startHaproxy(
  servers: string[],
  stack: AsyncDisposableStack,
): Promise<string> {
  const port = freePort();
  const child = new Deno.Command(haproxyBin()!, {
    args: ["-f", CFG, "-db"],
    env: {
      SKB_BIND: `127.0.0.1:${port}`,
      SKB_H1: servers[0]!,
      // One host: both names point at it.
      SKB_H2: servers[1] ?? servers[0]!,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  stack.defer(async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // gone
    }
    await child.status;
    await output;
  });
  const balancer = `http://127.0.0.1:${port}`;
  // Ready when it answers through to a host.
  for (let i = 0;; i++) {
    const ready = await fetch(`${balancer}/health`).then(
      (r) => (r.body?.cancel(), r.ok),
      () => false,
    );
    if (ready) return balancer;
    if (i > 200) {
      try {
        child.kill("SIGKILL");
      } catch {
        // it exited: its output says why
      }
      const [out, err] = await output;
      throw new Error(`HAProxy did not start:\n${out}${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An A2E session over HTTP+SSE, handshaken, that calls tools. */
export interface A2eSession {
  /** The transport session's id (`X-Session-Id`). */
  readonly id: string;
  /** Calls a tool; resolves with the `tool/call/resp` message. */
  call(tool: string, args: Record<string, unknown>): Promise<Msg>;
  /** Sends a call without waiting; its answer comes on the stream. */
  send(raw: Msg): Promise<Response>;
  /** The stream (for a test that reads it itself). */
  readonly stream: SseStream;
  /** Drops the stream. */
  close(): Promise<void>;
}

let calls = 0;

/**
 * Opens an A2E session over HTTP+SSE (the raw client speaking what the
 * Python SDK speaks) and handshakes with {@link TOKEN} or `options.token`.
 *
 * @param base `http://host:port` (a host or the balancer)
 * @param options `token`: another token to use
 * @returns the session
 * @example Call a tool through the balancer
 * ```ts ignore
 * const s = await a2eSession("http://127.0.0.1:8787");
 * await s.call("echo", { n: 1 });
 * ```
 */
export async function a2eSession(
  base: string,
  options: { token?: string } = {},
): Promise<A2eSession> {
  const token = options.token ?? TOKEN;
  const sse = await openSse(`${base}/a2e`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const stream = await sse.stream();
  const waiting = new Map<string, (m: Msg) => void>();
  let failed: Error | null = null;
  const pump = (async () => {
    try {
      while (true) {
        const msg = await stream.next(3_600_000);
        const reqId = String(msg.req_id ?? "");
        // Answers only: events carry their call's req_id too.
        if (!/\/resp$|^error$/.test(String(msg.type))) continue;
        waiting.get(reqId)?.(msg);
        waiting.delete(reqId);
      }
    } catch (error) {
      failed = error as Error;
      for (const [, resolve] of waiting) {
        resolve({ type: "stream/failed", error: failed.message });
      }
      waiting.clear();
    }
  })();
  const request = async (msg: Msg): Promise<Msg> => {
    const id = String(msg.id);
    const answer = new Promise<Msg>((resolve) => waiting.set(id, resolve));
    if (failed) return { type: "stream/failed", error: failed.message };
    const res = await sse.send(JSON.stringify(msg));
    if (!res.ok) {
      waiting.delete(id);
      return {
        type: "send/failed",
        status: res.status,
        error: await res.text(),
      };
    }
    await res.body?.cancel();
    return await answer;
  };
  const hello = await request({
    type: "handshake/req",
    id: `hs${++calls}`,
    version: "1.0",
    auth_token: token,
  });
  if (hello.type !== "handshake/resp") {
    throw new Error(`Handshake failed: ${JSON.stringify(hello)}`);
  }
  return {
    id: sse.sessionId,
    stream,
    call: (tool, args) =>
      request({
        type: "tool/call/req",
        id: `c${++calls}`,
        tool_name: tool,
        arguments: args,
      }),
    send: (msg) => sse.send(JSON.stringify(msg)),
    async close() {
      await stream.close();
      await pump;
    },
  };
}

/**
 * Reads a JSON API path as the admin token.
 *
 * @param base a host or the balancer
 * @param path e.g. `/api/runs?limit=500`
 * @param options `token`: read as another token
 * @returns the parsed body
 * @example Read the stats
 * ```ts ignore
 * const stats = await api("http://127.0.0.1:8787", "/api/stats");
 * ```
 */
export async function api(
  base: string,
  path: string,
  options: { token?: string } = {},
): Promise<Msg> {
  const res = await fetch(`${base}${path}`, {
    headers: { authorization: `Bearer ${options.token ?? TOKEN}` },
  });
  const body = await res.json();
  if (!res.ok) {
    throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(body)}`);
  }
  return body;
}

/**
 * Every run the store lists (newest first), following the cursor.
 *
 * @param base a host or the balancer
 * @param query extra filters, e.g. `name=add`
 * @returns the runs as the API shows them
 * @example Every echo run
 * ```ts ignore
 * const runs = await allRuns("http://127.0.0.1:8787", "name=echo");
 * ```
 */
export async function allRuns(base: string, query = ""): Promise<Msg[]> {
  const runs: Msg[] = [];
  let before = "";
  while (true) {
    const page = await api(
      base,
      `/api/runs?limit=500${query ? `&${query}` : ""}${before}`,
    );
    runs.push(...page.runs as Msg[]);
    if (page.next === null) return runs;
    before = `&before=${page.next}`;
  }
}

/** A viewer of a host's `/api/live`, reading its text as it comes. */
export interface LiveViewer {
  /** Everything read so far. */
  readonly text: string;
  /** Reads until `pattern` matches what was read; returns the text. */
  until(pattern: RegExp): Promise<string>;
  /** Stops reading. */
  cancel(): Promise<void>;
}

/**
 * Opens a host's `/api/live` as a token.
 *
 * @param base a host
 * @param options `token`: whose view (default {@link TOKEN}, an admin)
 * @returns the viewer
 * @example Wait for the first snapshot
 * ```ts ignore
 * const live = await liveViewer("http://127.0.0.1:8787");
 * await live.until(/event: hello/);
 * await live.cancel();
 * ```
 */
export async function liveViewer(
  base: string,
  options: { token?: string } = {},
): Promise<LiveViewer> {
  const res = await fetch(`${base}/api/live`, {
    headers: { authorization: `Bearer ${options.token ?? TOKEN}` },
    // A guard against a hang, not a timing: the test fails instead.
    signal: AbortSignal.timeout(120_000),
  });
  if (!res.ok) throw new Error(`GET /api/live: ${res.status}`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  return {
    get text() {
      return text;
    },
    async until(pattern: RegExp) {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`The live stream ended:\n${text}`);
        text += value;
      }
      return text;
    },
    cancel: () => reader.cancel().catch(() => {}),
  };
}

/**
 * Waits for a condition the fleet reaches by itself (a write landing, a
 * host marking its runs, a heartbeat ageing), failing with `what` if it
 * never does (after about 30 s: a hang guard, not a timing).
 *
 * @param what the condition, for the failure
 * @param check resolves with a value once it holds, undefined before
 * @returns the value
 * @example Wait for a run to be stored
 * ```ts ignore
 * const runs = await until("a run", async () => (await allRuns(url)).at(0));
 * ```
 */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const found = await check().catch(() => undefined);
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Never happened: ${what}`);
}
