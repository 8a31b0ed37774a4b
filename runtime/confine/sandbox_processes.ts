/**
 * How the pool's sandbox processes (call processes and discovery
 * processes) are confined: for each sandbox main script, a wrapper that
 * turns its unconfined command into the bwrap one (`confine.ts`), with the
 * script and its local imports bound read-only, its own egress proxy when
 * its grant names hosts, and the sandbox's Deno cache as its `DENO_DIR`.
 *
 * The sandbox cache is a folder the host owns and fills by running
 * skillbox's own sandbox runtime (the process main scripts and the
 * worker's imports) outside any sandbox, so that its transpiled code and
 * V8 code cache are ready. Why a separate folder: the host's own cache
 * also holds what every principal's modules compiled to. This one only
 * ever receives what the host itself runs into it, and no sandbox can
 * write to it, so no principal can read another's transpiled modules or
 * plant code in the cache. Its `npm` and `remote` entries are links to the
 * host cache's folders (which confined processes get read-only).
 *
 * @module
 */

import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DatabaseSync } from "node:sqlite";
import type { Permissions } from "../../protocol/permissions.ts";
import {
  CACHE_DATABASES,
  commandOutput,
  confineArgs,
  type ConfinementLayout,
  type ConfinementMode,
  type ConfinementStatus,
  DENO_DIR_PARTS,
  denoArgs,
  detectConfinement,
  relayFlags,
} from "./confine.ts";
import { realPath, within } from "./mount_rule.ts";
import { RELAY_TOKEN_ARG } from "../../protocol/egress_relay.ts";
import { moduleGraph } from "../discovery/module_graph.ts";
import type { Policy } from "../sandbox/grants.ts";
import { deniedByTree } from "../sandbox/denied_trees.ts";
import type { SandboxCommand } from "../sandbox/sandbox_process.ts";
import { EgressBroker } from "../egress/broker.ts";
import { openEgressProxy } from "../egress/proxy.ts";
import { WORKER_ZOD } from "../sandbox/bootstrap_text.ts";

/** Turns a process's unconfined command into the one to spawn. */
export type CommandWrapper = (
  command: SandboxCommand,
  grant: Permissions,
) => SandboxCommand;

// The sandbox cache is filled once per main script for the whole host.
const caches = new Map<string, Promise<string | undefined>>();

/**
 * Confinement for one pool.
 *
 * @example Off: commands pass through unchanged
 * ```ts
 * import { Confiner } from "./sandbox_processes.ts";
 * import assert from "node:assert/strict";
 * const confiner = new Confiner("off");
 * const wrap = await confiner.wrapperFor(new URL("./confine.ts", import.meta.url));
 * const cmd = { program: "deno", args: ["run", "x.ts"], env: {}, cwd: "/" };
 * assert.equal(wrap(cmd, {}), cmd);
 * ```
 */
export class Confiner {
  /** The configured mode. */
  readonly mode: ConfinementMode;
  readonly #wrappers = new Map<string, Promise<CommandWrapper>>();
  readonly #egress: EgressBroker;
  readonly #policy: Policy;

  /**
   * @param mode `sandbox.confinement`
   * @param options `egress`: the broker whose rules a confined process's
   * network follows (@default a broker with no private hosts allowed);
   * `policy`: the host policy, which a grant reached through a link must
   * also meet where the link leads (@default {})
   */
  constructor(
    mode: ConfinementMode,
    options: { egress?: EgressBroker; policy?: Policy } = {},
  ) {
    this.mode = mode;
    this.#egress = options.egress ?? new EgressBroker();
    this.#policy = options.policy ?? {};
  }

  /**
   * Whether processes are confined, and why not when they are not (the
   * host's detection, shared).
   *
   * @throws {SkillboxError} (rejects) when the mode is `"required"` and
   * confinement does not work
   */
  status(): Promise<ConfinementStatus> {
    return detectConfinement(this.mode);
  }

  /**
   * The wrapper for processes running `main`: synchronous once prepared, so
   * starting a process costs no extra await.
   *
   * @param main the sandbox main script
   * @returns the wrapper (identity when not confined)
   */
  wrapperFor(main: URL): Promise<CommandWrapper> {
    return this.#wrappers.getOrInsertComputed(main.href, () => {
      const wrapper = this.#prepare(main);
      wrapper.catch(() => this.#wrappers.delete(main.href));
      return wrapper;
    });
  }

  async #prepare(main: URL): Promise<CommandWrapper> {
    const layout = (await this.status()).layout;
    if (!layout) return (command) => command;
    // The script and its local imports are all the host code that exists
    // inside; a main loaded from a URL comes from Deno's remote cache.
    const file = main.protocol === "file:";
    const mainArg = file ? fileURLToPath(main) : main.href;
    const runtimeFiles = file ? (await moduleGraph(mainArg)).files : [];
    // Without it (no writable cache folder) processes start colder: only
    // the host cache's npm and remote folders.
    const cache = caches.getOrInsertComputed(
      main.href,
      () =>
        prepareSandboxCache({
          execPath: layout.execPath,
          denoDir: layout.denoDir,
          mains: [main],
        }).catch(() => undefined),
    );
    const at: Prepared = {
      layout,
      runtimeFiles,
      cacheDir: await cache,
      policy: this.#policy,
    };
    return (command, grant) =>
      (grant.net ?? []).length === 0
        ? confined(command, grant, at)
        : this.#withEgress(command, grant, { ...at, main: mainArg });
  }

  /**
   * A process whose grant names hosts: its own proxy socket (checked
   * against exactly those hosts), the relay's flags before the main script
   * and its token after, `HTTP(S)_PROXY` naming the relay, and the socket
   * closed when the process exits.
   */
  #withEgress(
    command: SandboxCommand,
    grant: Permissions,
    at: Prepared & { main: string },
  ): SandboxCommand {
    const proxy = openEgressProxy({ broker: this.#egress, allow: grant.net! });
    try {
      const i = command.args.lastIndexOf(at.main);
      const args = [...command.args];
      args.splice(
        i,
        1,
        ...relayFlags(command.args),
        at.main,
        RELAY_TOKEN_ARG + proxy.token,
      );
      return {
        ...confined({ ...command, args }, grant, {
          ...at,
          egressSocket: proxy.path,
        }),
        release: () => proxy.close(),
      };
    } catch (err) {
      proxy.close();
      throw err;
    }
  }
}

// What a pool's wrapper prepared once for every process of one main
// script, and the host policy.
interface Prepared {
  layout: ConfinementLayout;
  /** The main script and its local imports. */
  runtimeFiles: string[];
  /** The sandbox cache, when it could be prepared. */
  cacheDir?: string;
  policy: Policy;
}

/**
 * The confined form of a sandbox process's command: the same Deno
 * arguments inside bwrap, with only the granted variables (and `PATH` for
 * a `run` grant) left of its environment, and its sockets (its control
 * socket) bound in at their paths, read-only: connecting to a socket is
 * not a write to its mount. A grant is checked against the policy as
 * written (`grants.ts`); one reached through a link, which module code
 * with a write grant and a binary that makes links can plant, is mounted
 * only where the policy would grant the link's target.
 */
function confined(
  command: SandboxCommand,
  grant: Permissions,
  at: Prepared & { egressSocket?: string },
): SandboxCommand {
  const keep = new Set(grant.env ?? []);
  if ((grant.run ?? []).length > 0) keep.add("PATH");
  const env = Object.fromEntries(
    Object.entries(command.env).filter(([name]) => keep.has(name)),
  );
  const cmd = confineArgs(at.layout, {
    args: command.args,
    grant,
    runtimeFiles: at.runtimeFiles,
    env,
    cacheDir: at.cacheDir,
    admitLink: (real, writable) => grantable(real, writable, at.policy),
    binds: (command.sockets ?? []).map((path) => ({ from: path, to: path })),
    egress: at.egressSocket ? { socket: at.egressSocket } : undefined,
  });
  return { program: cmd.command, args: cmd.args, env: cmd.env, cwd: cmd.cwd };
}

/**
 * Whether the policy grants a real path: inside the real path of one of
 * its roots of that kind, and neither denied nor in a denied tree (both
 * compared as written and as real paths).
 */
function grantable(real: string, writable: boolean, policy: Policy): boolean {
  const both = (path: string) => {
    const absolute = resolve(path);
    return [absolute, realPath(absolute) ?? absolute];
  };
  const roots = (policy[writable ? "write" : "read"] ?? []).flatMap(both);
  const deny = (policy.deny ?? []).flatMap(both);
  const trees = (policy.deniedTrees ?? []).flatMap((tree) =>
    both(tree.root).map((root, i) => ({
      root,
      except: tree.except.map((e) => both(e)[i]!),
    }))
  );
  return roots.some((root) => within(real, root)) &&
    !deny.some((d) => within(real, d) || within(d, real)) &&
    !deniedByTree(real, trees);
}

// Name of the sandbox cache folder inside the host's `DENO_DIR`.
const SANDBOX_CACHE_NAME = "skillbox_sandbox";

/** What {@link prepareSandboxCache} needs. */
export interface SandboxCacheOptions {
  /** The Deno binary (the one confined processes run). */
  execPath: string;
  /** The host's Deno cache folder (real path). */
  denoDir: string;
  /** Sandbox main scripts to run once into the cache. */
  mains: URL[];
}

/**
 * Creates (or refreshes) the sandbox cache: runs each main with stdin
 * closed (a sandbox main exits when stdin ends, after loading all its
 * imports) and loads the worker's npm imports, all with `DENO_DIR` set to
 * the sandbox cache. Failures are not fatal: the folder is then just
 * colder, never wrong (Deno checks every cached entry against its source).
 *
 * @param options binary, host cache and mains
 * @returns the sandbox cache folder, `<denoDir>/skillbox_sandbox`
 * @example A cache with the host cache's npm folder linked in
 * ```ts
 * import { prepareSandboxCache } from "./sandbox_processes.ts";
 * import assert from "node:assert/strict";
 * const denoDir = await Deno.makeTempDir();
 * const dir = await prepareSandboxCache({ execPath: Deno.execPath(), denoDir, mains: [] });
 * assert.equal((await Deno.lstat(`${dir}/npm`)).isSymlink, true);
 * await Deno.remove(denoDir, { recursive: true });
 * ```
 */
export async function prepareSandboxCache(
  options: SandboxCacheOptions,
): Promise<string> {
  const dir = join(options.denoDir, SANDBOX_CACHE_NAME);
  await Deno.mkdir(dir, { recursive: true });
  for (const part of DENO_DIR_PARTS) {
    await Deno.symlink(join(options.denoDir, part), join(dir, part)).catch(
      (err) => {
        // Another host prepared it first.
        if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      },
    );
  }
  // Each run's failure only leaves the cache colder.
  const run = (args: string[]) =>
    commandOutput(options.execPath, args, {
      env: { DENO_DIR: dir, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      cwd: "/",
    });
  const runs = options.mains.filter((m) => m.protocol === "file:").map((m) =>
    run([
      // As sandbox processes run (see sandbox/sandbox_process.ts): the source hash of
      // a compiled module includes the config's compiler options, and a
      // confined process, which finds no config, would otherwise compile
      // its main again and retry writing it to the read-only cache for
      // 150 ms (Deno's atomic write backs off 10, 20, ... 50 ms).
      ...denoArgs({ workers: true }),
      fileURLToPath(m),
    ])
  );
  runs.push(
    // Host code importing the one npm package the worker bootstrap imports
    // at run time (from the host cache's npm folder, linked in).
    run([
      ...denoArgs({ subcommand: "eval", noRemote: false }),
      `await import(${JSON.stringify(WORKER_ZOD)});`,
    ]),
  );
  await Promise.all(runs);
  for (const name of CACHE_DATABASES) settle(join(dir, name));
  return dir;
}

/**
 * Moves a cache database's write-ahead log into the database file and
 * leaves it in rollback-journal mode: a reader on a read-only mount cannot
 * create the WAL's shared-memory file, and then Deno gives up on the cache.
 * Best effort: a database in use, absent or locked stays as it is.
 */
function settle(path: string): void {
  try {
    Deno.statSync(path);
    using db = new DatabaseSync(path);
    db.exec("PRAGMA busy_timeout = 1000");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.exec("PRAGMA journal_mode = DELETE");
  } catch {
    // Colder, never wrong.
  }
}
