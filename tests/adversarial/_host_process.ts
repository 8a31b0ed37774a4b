/**
 * A host in its own process, started as an operator starts it (`host.ts
 * --config`), for the tests that measure its memory (RSS) or read what it
 * logs. Stopped with `await using`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { HOST_FLAGS as FLAGS, HOST_MAIN as HOST } from "../support/host_cli.ts";

/** A running host process. */
export interface HostProcess extends AsyncDisposable {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** Its process id. */
  readonly pid: number;
  /** Its folder: config, store, cache. */
  readonly work: string;
  /** What it printed on stderr so far, one entry a line. */
  readonly lines: readonly string[];
  /** Resolves with the first line (past or future) that matches, or throws after `ms`. */
  waitForLine(pattern: RegExp, ms: number): Promise<string>;
  /** Its resident memory, in bytes. */
  rssBytes(): Promise<number>;
}

/**
 * Starts a host with `config` (snake_case, as in `skillbox.jsonc`; the
 * store and cache go in a fresh folder) on a free port.
 *
 * @param config the configuration file's content
 * @param options `heapMb`: the host's V8 old-space limit; `maxOpenFiles`:
 *   its file descriptor limit (run under `prlimit`); `env`: variables set
 *   for it alone (a test's own `TMPDIR`: under `deno test --parallel`
 *   other test modules share the test process's environment)
 * @returns the running host
 */
export async function startHostProcess(
  config: Record<string, unknown>,
  options: {
    heapMb?: number;
    maxOpenFiles?: number;
    env?: Record<string, string>;
  } = {},
): Promise<HostProcess> {
  const work = await Deno.makeTempDir({ prefix: "skillbox-host-" });
  const file = join(work, "skillbox.jsonc");
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      builtin_skills: false,
      store: { path: join(work, "runs.db") },
      ...config,
      sandbox: { cache_dir: join(work, "cache"), ...config.sandbox as object },
    }),
  );
  // prlimit runs the host in its own place (exec): the child is the host.
  const limit = options.maxOpenFiles
    ? [`--nofile=${options.maxOpenFiles}`, Deno.execPath()]
    : [];
  const child = new Deno.Command(limit.length ? "prlimit" : Deno.execPath(), {
    args: [
      ...limit,
      "run",
      ...FLAGS,
      // A small heap makes garbage collected early, so that RSS shows what
      // is kept rather than what was not yet collected.
      ...(options.heapMb
        ? [`--v8-flags=--max-old-space-size=${options.heapMb}`]
        : []),
      HOST,
      "--config",
      file,
      "--port",
      "0",
    ],
    cwd: work,
    env: options.env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const waiters = new Set<{ pattern: RegExp; resolve: (l: string) => void }>();
  const reading = (async () => {
    let carry = "";
    for await (
      const text of child.stderr.pipeThrough(new TextDecoderStream())
    ) {
      const parts = (carry + text).split("\n");
      carry = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        for (const w of waiters) {
          if (w.pattern.test(line)) {
            waiters.delete(w);
            w.resolve(line);
          }
        }
      }
    }
  })();
  const waitForLine = (pattern: RegExp, ms: number): Promise<string> => {
    const seen = lines.find((l) => pattern.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(
          new Error(
            `No line matching ${pattern} within ${ms} ms:\n${lines.join("\n")}`,
          ),
        );
      }, ms);
      const waiter = {
        pattern,
        resolve: (line: string) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      waiters.add(waiter);
    });
  };
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    // A host waits for open responses before it exits: not forever here.
    const killer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }, 15_000);
    await child.status;
    clearTimeout(killer);
    await reading.catch(() => {});
    await Deno.remove(work, { recursive: true }).catch(() => {});
  };
  try {
    const banner = await waitForLine(/skillbox listening: ws:\/\//, 60_000);
    const port = /127\.0\.0\.1:(\d+)\//.exec(banner)?.[1];
    return {
      url: `http://127.0.0.1:${port}`,
      pid: child.pid,
      work,
      lines,
      waitForLine,
      rssBytes: () => rssOf(child.pid),
      [Symbol.asyncDispose]: stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

// `ps`, not /proc: Deno wants --allow-all for /proc/<pid>.
async function rssOf(pid: number): Promise<number> {
  const out = await new Deno.Command("ps", {
    args: ["-o", "rss=", "-p", String(pid)],
  }).output();
  return Number(new TextDecoder().decode(out.stdout).trim()) * 1024;
}

/**
 * Everything the console shows a host's operator: its catalog and every
 * run in full (for tests that a secret reaches none of it).
 */
export async function consoleText(host: HostProcess): Promise<string> {
  const parts = [await (await fetch(`${host.url}/api/catalog`)).text()];
  const page = await (await fetch(`${host.url}/api/runs?limit=200`)).json();
  parts.push(JSON.stringify(page));
  for (const run of page.runs as { id: string }[]) {
    parts.push(await (await fetch(`${host.url}/api/runs/${run.id}`)).text());
  }
  return parts.join("\n");
}

/** Fails, naming where, when the text holds any of the secrets. */
export function assertNoSecret(
  text: string,
  secrets: string[],
  where: string,
): void {
  for (const secret of secrets) {
    assert.ok(
      !text.includes(secret),
      `${where} shows "${secret}": ${text.slice(0, 2000)}`,
    );
  }
}
