/**
 * What a standard stack tells the operator about its skills folders: the
 * first load's report (counts, failures, refusals; each failure logged),
 * refusals found by later reloads (logged once), and every tool's status
 * with what the registry and skill catalog refused, for the console.
 *
 * @module
 */

import type { Registry } from "./registry/registry.ts";
import type { RegistryRefusal, RegistrySnapshot } from "./registry/types.ts";
import type { SkillCatalog } from "./skills/catalog.ts";
import { skillLoadWarnings } from "./skills/catalog.ts";
import type { Policy } from "./sandbox/grants.ts";
import { type ToolStatus, toolStatuses } from "./tools/policy.ts";
import type { ToolPolicyConfig } from "./tools/policy.ts";

/**
 * What the first load of the skills folders found.
 *
 * @example Read what a host loaded from its folder
 * ```ts
 * import { parseConfig } from "./config.ts";
 * import { createHost } from "./host.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const tool = (name: string) =>
 *   `export default { kind: "tool", name: "${name}", description: "A tool", run: () => null };`;
 * await Deno.writeTextFile(`${dir}/hello.ts`, tool("hello"));
 * // Two files claiming one name: neither is served.
 * await Deno.writeTextFile(`${dir}/a.ts`, tool("twin"));
 * await Deno.writeTextFile(`${dir}/b.ts`, tool("twin"));
 * const config = parseConfig(JSON.stringify({
 *   skills: [dir],
 *   builtin_skills: false,
 *   store: null,
 *   sandbox: { cache_dir: null },
 * }));
 * const host = createHost({ config });
 * const report = await host.ready;
 * assert.equal(report.tools, 1);
 * assert.deepEqual(report.dirs, [dir]);
 * assert.deepEqual(report.errors.map((e) => e.path).sort(), [
 *   `${dir}/a.ts`,
 *   `${dir}/b.ts`,
 * ]);
 * await host.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export interface LoadReport {
  /** Tools served. */
  tools: number;
  /** Toolkits served. */
  toolkits: number;
  /** Skills discovered (code skills and `SKILL.md` folders), any status. */
  skills: number;
  /** The skills folders read, absolute. */
  dirs: string[];
  /** Files that could not be loaded, and why. */
  errors: { path: string; message: string }[];
  /** Skill dialect warnings and unloadable skills, one line each. */
  warnings: string[];
  /**
   * Definitions read but not served, and claims not granted (a name taken
   * by a shipped or earlier definition, a toolkit of another folder), with
   * why; each is also in `errors`. @default []
   */
  refused?: { kind: string; name: string; path: string; reason: string }[];
}

/** Every tool's status and every refusal, for the operator's catalog. */
export interface RegistryStatus {
  tools: ToolStatus[];
  refused: RegistryRefusal[];
}

/**
 * What the first load found; each file that failed is logged, as the
 * registry's sentence that names it.
 *
 * @param loaded the loaded registry
 * @param options the skill catalog, the folders read, the log
 * @returns the report
 * @example An empty registry
 * ```ts
 * import { loadReport } from "./load_report.ts";
 * import { buildSnapshot } from "./registry/snapshot.ts";
 * import assert from "node:assert/strict";
 * const registry = { snapshot: buildSnapshot([]) } as never;
 * const report = await loadReport(registry, {
 *   catalog: { skills: () => Promise.resolve([]) }, dirs: [{ path: "/s" }], log() {},
 * });
 * assert.deepEqual(report.refused, []);
 * ```
 */
export async function loadReport(
  loaded: Pick<Registry, "snapshot">,
  options: {
    catalog: SkillCatalog;
    /** The skills folders read. */
    dirs: readonly { path: string }[];
    log: (line: string) => void;
  },
): Promise<LoadReport> {
  const { catalog, log } = options;
  const snapshot = loaded.snapshot;
  // Each message names its file already (RegistryError.message).
  for (const error of snapshot.errors) log(error.message);
  const skills = await catalog.skills();
  const refused = [...snapshot.refused, ...(catalog.refused?.() ?? [])];
  return {
    tools: snapshot.tools.size,
    toolkits: snapshot.toolkits.size,
    skills: skills.length,
    warnings: skillLoadWarnings(skills),
    dirs: options.dirs.map((d) => d.path),
    errors: snapshot.errors.map((e) => ({
      path: e.path,
      message: e.message,
    })),
    refused: refused.map((r) => ({
      kind: r.kind,
      name: r.name,
      path: r.path,
      reason: r.reason,
    })),
  };
}

/**
 * Logs each refusal a later reload finds, once: a file dropped in while
 * the host runs is refused as loudly as one found at start.
 *
 * @param loaded the live registry
 * @param log where the lines go
 * @example
 * ```ts
 * import { logNewRefusals } from "./load_report.ts";
 * import { buildSnapshot } from "./registry/snapshot.ts";
 * import assert from "node:assert/strict";
 * let listener = (_c: unknown) => {};
 * const registry = {
 *   snapshot: buildSnapshot([]),
 *   onChange: (l: (c: unknown) => void) => (listener = l, () => {}),
 * } as never;
 * const lines: string[] = [];
 * logNewRefusals(registry, (l) => lines.push(l));
 * const refusal = { kind: "tool", name: "x", path: "/s/x.ts", origin: "file", reason: "Refused" };
 * listener({ snapshot: { refused: [refusal] } });
 * listener({ snapshot: { refused: [refusal] } });
 * assert.deepEqual(lines, ["Refused"]);
 * ```
 */
export function logNewRefusals(
  loaded: Pick<Registry, "snapshot" | "onChange">,
  log: (line: string) => void,
): void {
  let known = new Set(loaded.snapshot.refused.map((r) => r.reason));
  loaded.onChange(({ snapshot }) => {
    const now = new Set(snapshot.refused.map((r) => r.reason));
    for (const reason of now) if (!known.has(reason)) log(reason);
    known = now;
  });
}

/**
 * Every tool's status under the host policy, and what the registry and the
 * skill catalog refused.
 *
 * @param snapshot the registry's snapshot
 * @param options the policy's tool rules and cap, the skill catalog
 * @returns the operator's view
 * @example
 * ```ts
 * import { registryStatus } from "./load_report.ts";
 * import { buildSnapshot } from "./registry/snapshot.ts";
 * import assert from "node:assert/strict";
 * const status = registryStatus(buildSnapshot([]), {
 *   rules: { tools: { allow: [], deny: [], tokens: {} }, permissions: {} },
 * });
 * assert.deepEqual(status, { tools: [], refused: [] });
 * ```
 */
export function registryStatus(
  snapshot: RegistrySnapshot,
  options: {
    rules: { tools: ToolPolicyConfig; permissions: Policy };
    /** Refuses `SKILL.md` folders named like a skill of higher standing. */
    catalog?: Pick<SkillCatalog, "refused">;
  },
): RegistryStatus {
  return {
    tools: toolStatuses(snapshot, options.rules),
    refused: [...snapshot.refused, ...(options.catalog?.refused?.() ?? [])],
  };
}
