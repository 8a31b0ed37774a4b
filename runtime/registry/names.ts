/**
 * Who gets a name several definitions claim, and how a refusal is worded:
 * builtin first, then imported MCP servers, then the skills folders in
 * config order, then (within one folder) the definition that held the name
 * before. Used by `buildSnapshot` in `normalize.ts`.
 *
 * @module
 */

import { basename, relative } from "node:path";
import type {
  Origin,
  RegistryError,
  RegistryRefusal,
  RegistryRoot,
  RegistrySnapshot,
  ToolEntry,
  ToolkitEntry,
} from "./types.ts";

/** A definition read from a module, its name not yet granted. */
export type Candidate<T> = {
  entry: T;
  listed: readonly string[];
  /** The skills folder its file was found under. */
  root: string;
};
/** A toolkit candidate: the entry before its tools are known. */
export type KitCandidate = Candidate<Omit<ToolkitEntry, "tools">>;
/** A tool candidate: the entry before its toolkit is known. */
export type ToolCandidate = Omit<ToolEntry, "toolkit">;
type Kind = RegistryRefusal["kind"];
type Named = { name: string; path: string; origin: Origin };

const LABEL: Record<Kind, string> = {
  tool: "Tool",
  toolkit: "Toolkit",
  skill: "Skill",
};

// Shipped code first, then what the operator configured by name (imported
// MCP servers), then the drop-in folders.
const ORIGIN_RANK: Record<Origin, number> = { builtin: 0, mcp: 1, file: 2 };

/**
 * A refusal, frozen.
 *
 * @param kind what was refused
 * @param entry the refused definition (or the toolkit whose claim was)
 * @param reason the sentence saying why
 * @returns the refusal
 * @example
 * ```ts
 * import { refusal } from "./names.ts";
 * import assert from "node:assert/strict";
 * const r = refusal("tool", { name: "x", path: "/s/x.ts", origin: "file" }, "No");
 * assert.equal(r.reason, "No");
 * ```
 */
export function refusal(
  kind: Kind,
  entry: Named,
  reason: string,
): RegistryRefusal {
  return Object.freeze({
    kind,
    name: entry.name,
    path: entry.path,
    origin: entry.origin,
    reason,
  });
}

/**
 * A definition's file as a reason names it: a shipped one by its place in
 * skillbox's skills folder, an imported server by its name, a drop-in by
 * its absolute path.
 *
 * @param entry the definition's path and origin
 * @param root the skills folder it was found under
 * @returns the words, values quoted
 * @example
 * ```ts
 * import { shown } from "./names.ts";
 * import assert from "node:assert/strict";
 * assert.equal(shown({ path: "/x/skills/fs/read.ts", origin: "builtin" }, "/x/skills"), 'builtin "skills/fs/read.ts"');
 * assert.equal(shown({ path: "/ops/read.ts", origin: "file" }, "/ops"), '"/ops/read.ts"');
 * ```
 */
export function shown(
  entry: { path: string; origin: Origin },
  root: string,
): string {
  if (entry.origin === "builtin") {
    return `builtin "${basename(root)}/${relative(root, entry.path)}"`;
  }
  if (entry.origin === "mcp") {
    return `MCP server "${entry.path.slice(root.length)}"`;
  }
  return `"${entry.path}"`;
}

/**
 * Who gets a name when several definitions of one kind claim it; the
 * losers are told to `refused`, ties of equal standing to `errors` (and
 * the name blocked).
 *
 * @example The shipped tool keeps its name
 * ```ts
 * import { NameRules } from "./names.ts";
 * import assert from "node:assert/strict";
 * const refused: never[] = [];
 * const rules = new NameRules([], undefined, { refused, errors: [], broken: new Map() });
 * const c = (path: string, origin: "builtin" | "file") =>
 *   ({ entry: { name: "read_file", path, origin }, listed: [], root: "/r" });
 * const won = rules.pick("tool", [c("/r/a.ts", "file"), c("/r/b.ts", "builtin")], new Map());
 * assert.equal(won.get("read_file")?.entry.path, "/r/b.ts");
 * assert.equal(refused.length, 1);
 * ```
 */
export class NameRules {
  #roots: readonly RegistryRoot[];
  #previous: RegistrySnapshot | undefined;
  #refused: RegistryRefusal[];
  #errors: RegistryError[];
  #broken: ReadonlyMap<string, { origin: Origin; root: string }>;
  /** Who holds each name now (`kind\0name` to path), for the next load. */
  readonly held = new Map<string, string>();

  constructor(
    roots: readonly RegistryRoot[],
    previous: RegistrySnapshot | undefined,
    out: {
      refused: RegistryRefusal[];
      errors: RegistryError[];
      broken: ReadonlyMap<string, { origin: Origin; root: string }>;
    },
  ) {
    this.#roots = roots;
    this.#previous = previous;
    this.#refused = out.refused;
    this.#errors = out.errors;
    this.#broken = out.broken;
  }

  /**
   * Grants each name to one candidate.
   *
   * @param kind the candidates' kind
   * @param candidates every valid definition of that kind
   * @param blocked names no definition gets, and why (filled)
   * @returns the winners by name
   */
  pick<T extends Named>(
    kind: Kind,
    candidates: readonly Candidate<T>[],
    blocked: Map<string, string>,
  ): Map<string, Candidate<T>> {
    const byName = new Map<string, Candidate<T>[]>();
    for (const c of candidates) {
      const list = byName.get(c.entry.name) ?? [];
      list.push(c);
      byName.set(c.entry.name, list);
    }
    const unique = new Map<string, Candidate<T>>();
    for (const [name, list] of byName) {
      const holder = this.#holderPath(kind, name);
      if (this.#reserved(kind, name, holder, list)) continue;
      if (list.length === 1) {
        unique.set(name, list[0]!);
        this.held.set(`${kind}\0${name}`, list[0]!.entry.path);
        continue;
      }
      const ranked = list.map((c) => ({ c, rank: this.#rank(c, holder) }))
        .sort((a, b) => compareRank(a.rank, b.rank));
      const top = ranked.filter((r) =>
        compareRank(r.rank, ranked[0]!.rank) === 0
      )
        .map((r) => r.c);
      const rest = ranked.slice(top.length).map((r) => r.c);
      if (top.length === 1) {
        const winner = top[0]!;
        unique.set(name, winner);
        this.held.set(`${kind}\0${name}`, winner.entry.path);
        for (const c of rest) {
          this.#refused.push(refusal(
            kind,
            c.entry,
            `${LABEL[kind]} "${name}" in "${c.entry.path}" is refused: ` +
              `the name is taken by ${shown(winner.entry, winner.root)}`,
          ));
        }
        continue;
      }
      const message = `${LABEL[kind]} name "${name}" is defined in ${
        listed(top.map((c) => c.entry.path))
      }: neither is served`;
      blocked.set(name, message);
      for (const c of rest) {
        this.#refused.push(refusal(
          kind,
          c.entry,
          `${
            LABEL[kind]
          } "${name}" in "${c.entry.path}" is refused: ${message}`,
        ));
      }
      for (const c of [...top].sort(byPath)) {
        this.#errors.push({ path: c.entry.path, name, message });
      }
    }
    return unique;
  }

  // A holder whose file fails to load for now (an edit half done) keeps
  // its name against newcomers of no higher standing: they are refused.
  #reserved<T extends Named>(
    kind: Kind,
    name: string,
    holder: string | null,
    list: readonly Candidate<T>[],
  ): boolean {
    const broken = holder === null ? undefined : this.#broken.get(holder);
    if (broken === undefined) return false;
    const standing = this.#standing(broken.origin, broken.root);
    if (
      list.some((c) =>
        compareRank(this.#standing(c.entry.origin, c.root), standing) < 0
      )
    ) return false;
    this.held.set(`${kind}\0${name}`, holder!);
    for (const c of list) {
      this.#refused.push(refusal(
        kind,
        c.entry,
        `${LABEL[kind]} "${name}" in "${c.entry.path}" is refused: the name ` +
          `is held by ${shown({ ...broken, path: holder! }, broken.root)}, ` +
          "which failed to load",
      ));
    }
    return true;
  }

  // Origin, then the folder's place in the config, then the holder first.
  #rank(c: Candidate<Named>, holder: string | null): number[] {
    return [
      ...this.#standing(c.entry.origin, c.root),
      c.entry.path === holder ? 0 : 1,
    ];
  }

  #standing(origin: Origin, root: string): number[] {
    const index = this.#roots.findIndex((r) =>
      r.path === root && r.origin === origin
    );
    return [ORIGIN_RANK[origin] ?? 3, index < 0 ? this.#roots.length : index];
  }

  #holderPath(kind: Kind, name: string): string | null {
    const previous = this.#previous;
    if (!previous) return null;
    const kept = previous.holders?.get(`${kind}\0${name}`);
    if (kept !== undefined) return kept;
    const map = kind === "tool"
      ? previous.tools
      : kind === "toolkit"
      ? previous.toolkits
      : previous.skills;
    return map.get(name)?.path ?? null;
  }
}

function compareRank(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return 0;
}

function listed(paths: string[]): string {
  const quoted = paths.sort().map((p) => `"${p}"`);
  return quoted.length === 2
    ? `${quoted[0]} and ${quoted[1]}`
    : `${quoted.slice(0, -1).join(", ")} and ${quoted.at(-1)}`;
}

function byPath<T extends { entry: { path: string } }>(a: T, b: T): number {
  return a.entry.path < b.entry.path ? -1 : a.entry.path > b.entry.path ? 1 : 0;
}
