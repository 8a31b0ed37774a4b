/**
 * The paths of a standard stack: the skills folders it serves, and the
 * host's own files the sandbox policy keeps out of every sandbox's reach.
 *
 * @module
 */

import { existsSync, realpathSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { HostConfig } from "./config_schema.ts";
import type { Policy } from "./sandbox/grants.ts";
import type { SkillDir } from "./registry/scan.ts";
import { SYSTEM_SKILLS_DIR } from "./skills/catalog.ts";

// The project root: host source and config live here and must never be
// readable from a sandbox, but its `skills/` folder is served. Null when
// skillbox runs from a remote URL (JSR): its source is then in Deno's cache,
// not on a path a grant could name.
const PROJECT_ROOT = import.meta.url.startsWith("file:")
  ? dirname(dirname(fileURLToPath(import.meta.url)))
  : null;

/**
 * The skills folders a host serves: the built-in one (unless turned off),
 * then the config's, absolute, each once (by real path).
 *
 * @param config the host configuration
 * @returns the folders, in load order
 * @example
 * ```ts
 * import { skillDirs } from "./host_paths.ts";
 * import { defaultConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const config = { ...defaultConfig(), skills: [".", "./"], builtinSkills: false };
 * assert.deepEqual(skillDirs(config), [{ path: Deno.cwd(), origin: "file" }]);
 * ```
 */
export function skillDirs(config: HostConfig): SkillDir[] {
  const dirs: SkillDir[] = [];
  const seen = new Set<string>();
  const add = (path: string, origin: SkillDir["origin"]) => {
    const absolute = resolve(path);
    const key = existsSync(absolute) ? realpathSync(absolute) : absolute;
    if (seen.has(key)) return;
    seen.add(key);
    dirs.push({ path: absolute, origin });
  };
  if (config.builtinSkills && SYSTEM_SKILLS_DIR !== "") {
    add(SYSTEM_SKILLS_DIR, "builtin");
  }
  for (const dir of config.skills) add(dir, "file");
  return dirs;
}

/**
 * The policy sandboxes run under: the operator's, plus the host's own files
 * denied. The project root is denied as a whole except the served skills
 * folders inside it (an allow-list of what sandboxes need, so a folder
 * added to the project later is denied too), plus the config and cache.
 *
 * @param base the operator's policy
 * @param options the served skills folders and host files outside the root
 * @returns the policy
 * @example A new folder in the project root is not grantable
 * ```ts
 * import { sandboxPolicy } from "./host_paths.ts";
 * import assert from "node:assert/strict";
 * const policy = sandboxPolicy({}, { served: [], hostFiles: [] });
 * assert.equal(policy.deniedTrees?.length, 1);
 * ```
 */
export function sandboxPolicy(
  base: Policy,
  options: { served: string[]; hostFiles: string[] },
): Policy {
  return {
    ...base,
    deny: [...(base.deny ?? []), ...options.hostFiles],
    deniedTrees: [
      ...(base.deniedTrees ?? []),
      ...(PROJECT_ROOT === null
        ? []
        : [{ root: PROJECT_ROOT, except: options.served }]),
    ],
    // A module directly in a skills folder gets its own file, not its
    // neighbours'.
    sharedFolders: [...(base.sharedFolders ?? []), ...options.served],
  };
}

/**
 * Host files outside the project tree no sandbox may read: the config file,
 * the discovery cache and the run history.
 *
 * @param config the host configuration
 * @param configPath the config file, if any
 * @returns absolute paths
 * @example
 * ```ts
 * import { hostFiles } from "./host_paths.ts";
 * import { defaultConfig } from "./config.ts";
 * import assert from "node:assert/strict";
 * const config = { ...defaultConfig(), store: null };
 * config.sandbox.cacheDir = null;
 * assert.ok(hostFiles(config, "/etc/x.jsonc").includes("/etc/x.jsonc"));
 * ```
 */
export function hostFiles(config: HostConfig, configPath?: string): string[] {
  const paths: string[] = [];
  if (configPath) paths.push(resolve(configPath));
  if (existsSync("skillbox.jsonc")) paths.push(resolve("skillbox.jsonc"));
  if (config.sandbox.cacheDir) paths.push(resolve(config.sandbox.cacheDir));
  // The run history holds every principal's arguments and results.
  if (config.store && config.store.path !== ":memory:") {
    const db = resolve(config.store.path);
    paths.push(db, `${db}-wal`, `${db}-shm`, `${db}-journal`);
  }
  return paths;
}
