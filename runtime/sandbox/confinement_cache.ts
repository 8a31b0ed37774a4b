/**
 * The Deno cache confined sandbox processes start from: a folder the host
 * owns and fills by running skillbox's own sandbox runtime (the process
 * main scripts and the worker's imports) outside any sandbox, so that its
 * transpiled code and V8 code cache are ready; confined processes get it
 * bound read-only as their `DENO_DIR`.
 *
 * Why a separate folder: the host's own cache also holds what every
 * principal's modules compiled to. This one only ever receives what the
 * host itself runs into it, and no sandbox can write to it, so no principal
 * can read another's transpiled modules or plant code in the cache.
 * Its `npm` and `remote` entries are links to the host cache's folders
 * (which confined processes get read-only, as before).
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DatabaseSync } from "node:sqlite";
import { WORKER_ZOD } from "./bootstrap_text.ts";

/** Name of the sandbox cache folder inside the host's `DENO_DIR`. */
export const SANDBOX_CACHE_NAME = "skillbox_sandbox";

// What the worker bootstrap imports at run time (see sandbox/worker/).
const WORKER_IMPORTS = [WORKER_ZOD];

/** What {@link prepareSandboxCache} needs. */
export interface SandboxCacheOptions {
  /** The Deno binary (the one confined processes run). */
  execPath: string;
  /** The host's Deno cache folder (real path). */
  denoDir: string;
  /** Sandbox main scripts to run once into the cache. */
  mains: URL[];
  /** The cache folder. @default `<denoDir>/skillbox_sandbox` */
  dir?: string;
}

/**
 * Creates (or refreshes) the sandbox cache: runs each main with stdin
 * closed (a sandbox main exits when stdin ends, after loading all its
 * imports) and loads the worker's npm imports, all with `DENO_DIR` set to
 * the sandbox cache. Failures are not fatal: the folder is then just
 * colder, never wrong (Deno checks every cached entry against its source).
 *
 * @param options binary, host cache and mains
 * @returns the sandbox cache folder
 * @example A cache with the host cache's npm folder linked in
 * ```ts
 * import { prepareSandboxCache } from "./confinement_cache.ts";
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
  const dir = options.dir ?? join(options.denoDir, SANDBOX_CACHE_NAME);
  await Deno.mkdir(dir, { recursive: true });
  for (const part of ["npm", "remote"]) {
    await Deno.symlink(join(options.denoDir, part), join(dir, part)).catch(
      (err) => {
        // Another host prepared it first.
        if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      },
    );
  }
  const runs = options.mains.filter((m) => m.protocol === "file:").map((m) =>
    run(options.execPath, dir, [
      "run",
      "--quiet",
      "--no-prompt",
      "--no-lock",
      // As sandbox processes run (see spawn.ts): the source hash of a
      // compiled module includes the config's compiler options, and a
      // confined process, which finds no config, would otherwise compile
      // its main again and retry writing it to the read-only cache for
      // 150 ms (Deno's atomic write backs off 10, 20, ... 50 ms).
      "--no-config",
      "--no-remote",
      "--cached-only",
      "--unstable-worker-options",
      fileURLToPath(m),
    ])
  );
  const imports = WORKER_IMPORTS.map((s) =>
    `await import(${JSON.stringify(s)});`
  )
    .join("");
  runs.push(
    run(options.execPath, dir, [
      "eval",
      "--quiet",
      "--no-lock",
      "--no-config",
      "--cached-only",
      imports,
    ]),
  );
  await Promise.all(runs);
  for (const name of DATABASES) settle(join(dir, name));
  return dir;
}

// Deno's SQLite caches a confined process reads.
const DATABASES = [
  "v8_code_cache_v2",
  "dep_analysis_cache_v2",
  "node_analysis_cache_v2",
];

/**
 * Moves a cache database's write-ahead log into the database file and
 * leaves it in rollback-journal mode: a reader on a read-only mount cannot
 * create the WAL's shared-memory file, and then Deno gives up on the cache.
 * Best effort: a database in use, absent or locked stays as it is.
 */
function settle(path: string): void {
  try {
    Deno.statSync(path);
    const db = new DatabaseSync(path);
    try {
      db.exec("PRAGMA busy_timeout = 1000");
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      db.exec("PRAGMA journal_mode = DELETE");
    } finally {
      db.close();
    }
  } catch {
    // Colder, never wrong.
  }
}

async function run(
  execPath: string,
  denoDir: string,
  args: string[],
): Promise<void> {
  await new Deno.Command(execPath, {
    args,
    cwd: "/",
    clearEnv: true,
    env: { DENO_DIR: denoDir, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output().catch(() => {});
}
