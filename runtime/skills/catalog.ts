/**
 * The skill catalog: every skill the host serves now, from the registry's
 * code skills, its Agent Skills folders and its imported MCP servers'
 * skills, with code skills' permissions checked against the policy. An
 * imported skill the host refused is Blocked with the reason; the others
 * read their files through `importedFiles`.
 *
 * @module
 */

import { basename, dirname, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { checkGrant, resolvePermissionPaths } from "../sandbox/grants.ts";
import type { Policy } from "../sandbox/grants.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import type {
  RegistryRefusal,
  RegistrySnapshot,
  SkillEntry,
} from "../registry/types.ts";
import { withNameWarning, withPolicyWarnings } from "./load_warnings.ts";
import { codeSkillRecord } from "./code_skill.ts";
import {
  failedSkillRecord,
  type FetchedSkillFiles,
  type SkillRecord,
} from "./skill_record.ts";
import { instructionSkillRecord } from "./instruction_skill.ts";
import { skillSource } from "./skill_source.ts";
import {
  findSkillFile,
  loadSkillFolder,
  type SkillFolder,
} from "./skill_md.ts";

/** Where the skills capability gets its skills. */
export interface SkillCatalog {
  /** Every skill now; called per request so hot reloads show at once. */
  skills(): Promise<readonly SkillRecord[]>;
  /**
   * Skills refused by the last {@link SkillCatalog.skills} because a skill
   * of higher standing holds the name (a `SKILL.md` folder named like a
   * shipped skill), with why. @default none
   */
  refused?(): readonly RegistryRefusal[];
}

/**
 * The folder of skillbox's own skills: what is found here is `system`. Empty
 * when skillbox itself was loaded from a remote URL (e.g. JSR), where there
 * is no folder to scan.
 */
export const SYSTEM_SKILLS_DIR: string = import.meta.url.startsWith("file:")
  ? fileURLToPath(new URL("../../skills", import.meta.url))
  : "";

/** Options for {@link registryCatalog}. */
export interface RegistryCatalogOptions {
  /** The live registry (its `snapshot` is read on every request). */
  registry: { readonly snapshot: RegistrySnapshot };
  /** The permission cap code skills are checked against. @default {} (own folder only) */
  policy?: Policy;
  /** The operator's home directory, for `source: "user"`. @default $HOME */
  home?: string | null;
  /** Folders whose skills are `system`. @default [SYSTEM_SKILLS_DIR] */
  systemDirs?: readonly string[];
  /**
   * The files of imported MCP servers' skills now, by skill name: such a
   * skill's `read_skill_file` reads them. @default none
   */
  importedFiles?: () => ReadonlyMap<string, FetchedSkillFiles>;
}

/**
 * A catalog over the registry: its code skills, plus its Agent Skills
 * folders loaded here (cached by `SKILL.md` size and mtime, so a hot reload
 * of one folder re-reads only that folder). Code skills' permissions are
 * resolved against their folder and checked against the policy; a skill
 * asking for more is Blocked with the permission named.
 *
 * @param options the registry and policy
 * @returns the catalog
 * @example A registry snapshot with one Agent Skills folder
 * ```ts
 * import { registryCatalog } from "./catalog.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/SKILL.md`, "---\nname: notes\ndescription: Notes\n---\nBe brief.");
 * const snapshot = { generation: 1, tools: new Map(), toolkits: new Map(), skills: new Map(),
 *   blocked: new Map(), agentSkills: [dir], errors: [], refused: [], roots: [] };
 * const catalog = registryCatalog({ registry: { snapshot }, home: null });
 * const [skill] = await catalog.skills();
 * assert.equal(skill?.definition.name, "notes");
 * assert.equal(skill?.definition.source, "project");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
// Long (about 105 lines): a factory whose closures share one cache of
// parsed SKILL.md folders; each closure is short.
export function registryCatalog(options: RegistryCatalogOptions): SkillCatalog {
  const cache = new Map<
    string,
    {
      stamp: string;
      file: string;
      folder: SkillFolder | null;
      error: string | null;
    }
  >();
  // Who held each name at the last request: a later file is the impostor.
  const holders = new Map<string, string>();
  let refused: readonly RegistryRefusal[] = [];
  const systemDirs = (options.systemDirs ?? [SYSTEM_SKILLS_DIR]).filter((d) =>
    d !== ""
  ).map((d) => resolve(d));
  const isSystem = (path: string) =>
    systemDirs.some((d) => path === d || path.startsWith(d + sep));
  const sourceOf = (path: string, origin: string) =>
    skillSource(path, {
      origin: origin === "builtin" || isSystem(path) ? "builtin" : "file",
      home: options.home,
    });

  const loadFolder = async (dir: string) => {
    let stamp = "missing";
    let file = "SKILL.md";
    try {
      file = (await findSkillFile(dir))?.name ?? file;
      const info = await Deno.stat(`${dir}/${file}`);
      stamp = `${file}:${info.size}:${info.mtime?.getTime() ?? 0}`;
    } catch {
      // loadSkillFolder reports the missing file
    }
    const hit = cache.get(dir);
    if (hit && hit.stamp === stamp) return hit;
    let entry: {
      stamp: string;
      file: string;
      folder: SkillFolder | null;
      error: string | null;
    };
    try {
      entry = { stamp, file, folder: await loadSkillFolder(dir), error: null };
    } catch (error) {
      entry = {
        stamp,
        file,
        folder: null,
        error: error instanceof Error ? error.message : String(error),
      };
    }
    cache.set(dir, entry);
    return entry;
  };

  return {
    async skills() {
      const snapshot = options.registry.snapshot;
      const records: SkillRecord[] = [];
      let imported: ReadonlyMap<string, FetchedSkillFiles> | null = null;
      for (const entry of snapshot.skills.values()) {
        const record = codeRecord(
          entry,
          sourceOf(entry.path, entry.origin),
          options.policy,
        );
        if (entry.origin !== "mcp") records.push(record);
        else {
          imported ??= options.importedFiles?.() ?? new Map();
          records.push(importedRecord(record, entry, imported));
        }
      }
      const folders = await Promise.all(snapshot.agentSkills.map(loadFolder));
      snapshot.agentSkills.forEach((dir, i) => {
        const loaded = folders[i]!;
        const source = sourceOf(dir, "file");
        records.push(
          loaded.folder
            ? withNameWarning(withPolicyWarnings(
              instructionSkillRecord(loaded.folder, { source }),
              options.policy ?? {},
            ))
            : failedSkillRecord(basename(dir), {
              path: `${dir}${sep}${loaded.file}`,
              message: loaded.error ?? "Cannot load SKILL.md",
              source,
            }),
        );
      });
      // Names clashing in the registry, or between a module and a folder,
      // are served by neither, like tools.
      for (const [name, reason] of snapshot.blocked) {
        if (/^Skill name/.test(reason)) {
          records.push(
            failedSkillRecord(name, {
              path: "",
              message: reason,
              source: "project",
            }),
          );
        }
      }
      const byName = new Map<string, SkillRecord[]>();
      for (const r of records) {
        byName.set(r.definition.name, [
          ...(byName.get(r.definition.name) ?? []),
          r,
        ]);
      }
      const refusedNow: RegistryRefusal[] = [];
      const out = [...byName.values()].map((list) =>
        list.length === 1
          ? list[0]!
          : precedence(list, { snapshot, holders, refused: refusedNow })
      );
      holders.clear();
      for (const r of out) {
        if (r.definition.filePath) {
          holders.set(r.definition.name, r.definition.filePath);
        }
      }
      refused = refusedNow;
      return out;
    },
    refused: () => refused,
  };
}

// Who keeps a name several skills claim: shipped skills first, then the
// skills folders in config order, then the one that held it before; the
// rest are refused. Equal standing, no holder: neither is served.
function precedence(
  list: SkillRecord[],
  state: {
    snapshot: RegistrySnapshot;
    holders: ReadonlyMap<string, string>;
    refused: RegistryRefusal[];
  },
): SkillRecord {
  const name = list[0]!.definition.name;
  const holder = state.holders.get(name);
  const roots = state.snapshot.roots;
  const rank = (r: SkillRecord) => {
    const path = r.definition.filePath ?? "";
    const index = roots.findIndex((root) =>
      path === root.path || path.startsWith(root.path + sep)
    );
    return [
      r.definition.source === "system" ? 0 : 1,
      index < 0 ? roots.length : index,
      path !== "" && path === holder ? 0 : 1,
    ];
  };
  const ranked = list.map((r) => ({ r, key: rank(r) })).sort((a, b) =>
    a.key.join(",") < b.key.join(",")
      ? -1
      : a.key.join(",") > b.key.join(",")
      ? 1
      : 0
  );
  const top = ranked.filter((x) =>
    x.key.join(",") === ranked[0]!.key.join(",")
  );
  if (top.length > 1 || !ranked[0]!.r.definition.filePath) {
    return clash(list);
  }
  const winner = ranked[0]!.r;
  const winnerPath = winner.definition.filePath!;
  const root = roots.find((r) => winnerPath.startsWith(r.path + sep));
  const taken = winner.definition.source === "system" && root
    ? `builtin "${basename(root.path)}/${relative(root.path, winnerPath)}"`
    : `"${winnerPath}"`;
  for (const { r } of ranked.slice(1)) {
    const path = r.definition.filePath ?? "";
    state.refused.push({
      kind: "skill",
      name,
      path,
      origin: r.definition.source === "system" ? "builtin" : "file",
      reason:
        `Skill "${name}" in "${path}" is refused: the name is taken by ${taken}`,
    });
  }
  return winner;
}

function codeRecord(
  entry: SkillEntry,
  source: ReturnType<typeof skillSource>,
  policy: Policy | undefined,
): SkillRecord {
  const folder = dirname(entry.path);
  let grant: Permissions | undefined;
  let denied: string | null = null;
  if (entry.permissions === "dynamic") {
    // A skill has no toolkit configuration to compute permissions from.
    denied =
      `Skill "${entry.name}" computes its permissions from configuration, which skills do not have`;
  } else {
    const check = checkGrant(
      resolvePermissionPaths(entry.permissions, folder),
      { modulePath: entry.path, policy },
    );
    if (check.ok) grant = check.grant;
    else denied = check.reason;
  }
  return codeSkillRecord(entry, { source, grant, denied });
}

// An imported MCP server's skill: refused by the host (the reason is in
// its metadata, set by `server_module.ts`, never by the server), or run
// with its files fetched from the server.
function importedRecord(
  record: SkillRecord,
  entry: SkillEntry,
  files: ReadonlyMap<string, FetchedSkillFiles>,
): SkillRecord {
  const metadata = entry.fields.metadata as Record<string, unknown> | null;
  if (typeof metadata?.refused === "string") {
    return { ...record, run: null, loadProblem: metadata.refused };
  }
  const fetched = files.get(entry.name);
  if (!fetched || record.run?.format !== "instructions") return record;
  return {
    ...record,
    run: { ...record.run, resources: fetched.resources, fetched },
  };
}

function clash(list: SkillRecord[]): SkillRecord {
  const first = list[0]!;
  const where = list.map((r) => `"${r.definition.filePath ?? "?"}"`).join(
    " and ",
  );
  return failedSkillRecord(first.definition.name, {
    path: first.definition.filePath ?? "",
    message:
      `Skill name "${first.definition.name}" is defined in ${where}: neither is served`,
    source: first.definition.source as ReturnType<typeof skillSource>,
  });
}
