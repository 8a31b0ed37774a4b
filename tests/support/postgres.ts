/**
 * A throwaway PostgreSQL cluster for tests: `initdb` into a temporary
 * folder, `pg_ctl start` on a free port with its Unix socket in that folder,
 * run as the `postgres` user when the tests run as root (PostgreSQL refuses
 * root; CI runs as root), stopped and removed at the end. A test that needs
 * it fails under `CI` when PostgreSQL is missing and is ignored elsewhere,
 * its name saying how to install it.
 *
 * @module
 */

import { join } from "node:path";

/** How to get the binaries on Debian (and in CI: `.ci/run` does). */
export const POSTGRES_INSTALL = "apt-get install -y postgresql";

/**
 * The folder of `initdb` and `pg_ctl`: `$PG_BIN`, else the newest of
 * Debian's `/usr/lib/postgresql/<version>/bin`, else null.
 *
 * @returns the folder, or null when PostgreSQL is not installed
 * @example Find Debian's binaries
 * ```ts ignore
 * const bin = postgresBin(); // "/usr/lib/postgresql/15/bin" or null
 * ```
 */
export function postgresBin(): string | null {
  const given = Deno.env.get("PG_BIN");
  if (given) return given;
  try {
    const versions = [...Deno.readDirSync("/usr/lib/postgresql")]
      .map((e) => e.name).filter((n) => /^\d+$/.test(n))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const bin = `/usr/lib/postgresql/${v}/bin`;
      try {
        Deno.statSync(join(bin, "pg_ctl"));
        return bin;
      } catch {
        // not this one
      }
    }
  } catch {
    // no Debian layout
  }
  return null;
}

/** A running throwaway cluster. */
export interface ThrowawayPostgres {
  /** Its port on 127.0.0.1. */
  port: number;
  /** The URL of its `postgres` database, as the `skillbox` superuser. */
  url: string;
  /** Creates a fresh database and returns its URL. */
  database(): Promise<string>;
  /** Stops the server (fast: connections are cut). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /**
   * Stops every process of the server (SIGSTOP: the postmaster and all it
   * started): the kernel still takes what clients send, nothing answers.
   */
  freeze(): Promise<void>;
  /** Lets the frozen processes run again (SIGCONT). */
  thaw(): void;
  /** Stops it and removes its folder. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

let databases = 0;

/**
 * Starts a throwaway cluster.
 *
 * @param bin the binaries' folder (see {@link postgresBin})
 * @returns the running cluster
 * @throws {Error} when PostgreSQL is missing or does not start (its log
 *   in the message)
 * @example A cluster for one test
 * ```ts ignore
 * await using pg = await startPostgres();
 * const url = await pg.database();
 * ```
 */
export async function startPostgres(
  bin: string | null = postgresBin(),
): Promise<ThrowawayPostgres> {
  if (bin === null) {
    throw new Error(`PostgreSQL is not installed: ${POSTGRES_INSTALL}`);
  }
  const dir = await Deno.makeTempDir({ prefix: "skb_pg_" });
  const data = join(dir, "data");
  const log = join(dir, "log");
  const asRoot = Deno.uid() === 0;
  if (asRoot) {
    const uid = Number((await output(["id", "-u", "postgres"])).trim());
    const gid = Number((await output(["id", "-g", "postgres"])).trim());
    await Deno.chown(dir, uid, gid);
  }
  const run = async (args: string[]) => {
    const argv = asRoot ? ["runuser", "-u", "postgres", "--", ...args] : args;
    const out = await new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      stdout: "piped",
      stderr: "piped",
      cwd: dir,
    }).output();
    if (!out.success) {
      const logText = await Deno.readTextFile(log).catch(() => "");
      throw new Error(
        `Cannot run "${args.join(" ")}": ${
          new TextDecoder().decode(out.stderr)
        }${logText}`,
      );
    }
  };
  let port = freePort();
  await run([
    join(bin, "initdb"),
    "-D",
    data,
    "-U",
    "skillbox",
    "-A",
    "trust",
    "--no-sync",
    "-E",
    "UTF8",
  ]);
  const options = () =>
    [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses=127.0.0.1",
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
      "-c max_connections=200",
    ].join(" ");
  const start = () =>
    run([
      join(bin, "pg_ctl"),
      "-D",
      data,
      "-l",
      log,
      "-o",
      options(),
      "-w",
      "start",
    ]);
  const stop = () =>
    run([join(bin, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop"]);
  // freePort() lets go of the port before PostgreSQL binds it, so a test
  // running beside may take it first (seen in CI: "could not bind ...
  // Address already in use"): the first start takes a new port then.
  for (let attempt = 1;; attempt++) {
    try {
      await start();
      break;
    } catch (error) {
      if (attempt >= 5 || !/Address already in use/.test(String(error))) {
        throw error;
      }
      port = freePort();
    }
  }
  let running = true;
  let frozen: number[] = [];
  const thaw = () => {
    for (const pid of frozen) Deno.kill(pid, "SIGCONT");
    frozen = [];
  };
  const url = `postgres://skillbox@127.0.0.1:${port}/postgres`;
  const cluster: ThrowawayPostgres = {
    port,
    url,
    async database() {
      const name = `t${Deno.pid}_${++databases}`;
      await run([
        join(bin, "createdb"),
        "-h",
        dir,
        "-p",
        String(port),
        "-U",
        "skillbox",
        name,
      ]);
      return `postgres://skillbox@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      await stop();
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async freeze() {
      const main = Number(
        (await Deno.readTextFile(join(data, "postmaster.pid"))).split("\n")[0],
      );
      const children = (await output(["ps", "-eo", "pid=,ppid="]))
        .trim().split("\n").map((line) => line.trim().split(/\s+/).map(Number))
        .filter(([, ppid]) => ppid === main).map(([pid]) => pid!);
      for (const pid of [main, ...children]) {
        Deno.kill(pid, "SIGSTOP");
        frozen.push(pid);
      }
    },
    thaw,
    async close() {
      thaw();
      if (running) {
        await run([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "stop"])
          .catch(() => {});
        running = false;
      }
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
    [Symbol.asyncDispose]() {
      return cluster.close();
    },
  };
  return cluster;
}

/**
 * Registers a test that needs PostgreSQL: it fails under `CI` when
 * PostgreSQL is missing, is ignored elsewhere (its name says how to install
 * it), else runs `fn` with a fresh cluster, closed after.
 *
 * @param name the test's name
 * @param fn the test, given the cluster and the test context
 * @example A test that needs a database
 * ```ts ignore
 * testWithPostgres("a store", async (pg) => { await pg.database(); });
 * ```
 */
export function testWithPostgres(
  name: string,
  fn: (pg: ThrowawayPostgres, t: Deno.TestContext) => Promise<void>,
): void {
  const bin = postgresBin();
  if (bin === null && Deno.env.get("CI")) {
    Deno.test(name, () => {
      throw new Error(
        `PostgreSQL is not installed and CI is set: CI must install it ` +
          `(${POSTGRES_INSTALL}; .ci/run does when it is missing)`,
      );
    });
    return;
  }
  if (bin === null) {
    Deno.test({
      name: `${name} [IGNORED: PostgreSQL is not installed; ` +
        `${POSTGRES_INSTALL} to run it]`,
      ignore: true,
      fn() {},
    });
    return;
  }
  Deno.test({
    name,
    // The client keeps its sockets until the pool ends, after the test's
    // own checks; the cluster is closed in `finally`.
    sanitizeOps: false,
    sanitizeResources: false,
    async fn(t) {
      const pg = await startPostgres(bin);
      try {
        await fn(pg, t);
      } finally {
        await pg.close();
      }
    },
  });
}

/**
 * A port free on 127.0.0.1 now.
 *
 * @returns the port
 * @example A port for a server started next
 * ```ts ignore
 * const port = freePort();
 * ```
 */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function output(argv: string[]): Promise<string> {
  const out = await new Deno.Command(argv[0]!, { args: argv.slice(1) })
    .output();
  return new TextDecoder().decode(out.stdout);
}
