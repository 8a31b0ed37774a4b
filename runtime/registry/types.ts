/**
 * The registry's data: immutable snapshots of every tool, toolkit and skill
 * found in the skills folders, and the errors met while reading them.
 *
 * Entries are frozen; a hot reload builds a new snapshot instead of changing
 * one, so a call that holds an entry keeps the version it started with.
 *
 * @module
 */

import type { Tool } from "../../protocol/tool.ts";
import type { JsonSchema } from "../../protocol/json.ts";
import type { Permissions } from "../../protocol/permissions.ts";

/**
 * Where a definition comes from: a drop-in file in a user skills folder
 * (`file`), a module shipped with skillbox (`builtin`), or an imported MCP
 * server (`mcp`). `tool/list/req`'s `filter_kind` matches it.
 */
export type Origin = "file" | "builtin" | "mcp";

/** Fields every registry entry has: where its code lives and which version. */
export interface ModuleRef {
  /** Absolute path of the module file. */
  readonly path: string;
  /** The export holding the definition (`"default"` or a name). */
  readonly export: string;
  /** The module's content hash; passed to the sandbox as the call version. */
  readonly hash: string;
  readonly origin: Origin;
}

/**
 * A tool, normalized from its module's definition: the domain {@link Tool}
 * (what agents list and models are offered) plus where its code lives and
 * what it may do.
 */
export interface ToolEntry extends Tool, ModuleRef {
  readonly kind: "tool";
  /** Markdown guidance for models, or "". */
  readonly prompt: string;
  readonly permissions: Permissions | "dynamic";
  readonly isolation: "warm" | "per-call";
  /** Runs code the client sent: its calls run in processes of the session. */
  readonly runsClientCode?: boolean;
}

/** A toolkit, normalized; `tools` is filled from membership. */
export interface ToolkitEntry extends ModuleRef {
  readonly kind: "toolkit";
  readonly name: string;
  readonly alias: string;
  readonly description: string;
  readonly category: string;
  readonly tags: readonly string[];
  readonly iconSvg: string | null;
  readonly version: string;
  /** JSON Schema of the configuration (`{}` when it takes none). */
  readonly configSchema: JsonSchema;
  /**
   * Permissions every tool of the toolkit gets on top of its own (often
   * `"dynamic"`: computed from the configuration, e.g. a configured root).
   */
  readonly permissions: Permissions | "dynamic";
  /** Names of its tools, sorted. */
  readonly tools: readonly string[];
}

/** A skill module found by the scan; the skills capability reads `fields`. */
export interface SkillEntry extends ModuleRef {
  readonly kind: "skill";
  readonly name: string;
  /** Every field as the author wrote it, schemas as JSON Schema. */
  readonly fields: Readonly<Record<string, unknown>>;
  readonly permissions: Permissions | "dynamic";
  readonly runnable: boolean;
}

/** A file or definition that could not be loaded, with why. */
export interface RegistryError {
  /** Absolute path of the file at fault. */
  readonly path: string;
  /** The definition's name when the problem is with one definition. */
  readonly name: string | null;
  /** A whole sentence that names the file at fault; values quoted. */
  readonly message: string;
}

/**
 * A definition the registry read but does not serve, or a claim it did not
 * grant: a name already held by a shipped or earlier definition (the
 * impostor), a tool whose `toolkit` field names a toolkit other than its
 * folder's, a toolkit listing a tool outside its folder tree.
 */
export interface RegistryRefusal {
  readonly kind: "tool" | "toolkit" | "skill";
  /** The refused definition's name (for a refused claim: the toolkit's). */
  readonly name: string;
  /** Absolute path of the refused definition's file. */
  readonly path: string;
  readonly origin: Origin;
  /** Sentence case, values quoted: what was refused and why. */
  readonly reason: string;
}

/** A skills folder, in the order names are granted (builtin first). */
export interface RegistryRoot {
  /** Absolute path. */
  readonly path: string;
  readonly origin: Origin;
}

/** One consistent view of everything loaded. */
export interface RegistrySnapshot {
  /** Increases by one with every reload that changed something. */
  readonly generation: number;
  readonly tools: ReadonlyMap<string, ToolEntry>;
  readonly toolkits: ReadonlyMap<string, ToolkitEntry>;
  readonly skills: ReadonlyMap<string, SkillEntry>;
  /**
   * Names defined more than once by definitions of equal standing (same
   * skills folder, none holding the name before), mapped to why; none of
   * their definitions is served.
   */
  readonly blocked: ReadonlyMap<string, string>;
  /** Absolute paths of Agent Skills folders (folders with a `SKILL.md`). */
  readonly agentSkills: readonly string[];
  readonly errors: readonly RegistryError[];
  /**
   * What was read but refused, with why (also in `errors`, so a load
   * report counts them).
   */
  readonly refused: readonly RegistryRefusal[];
  /** The skills folders in precedence order (who wins a name). */
  readonly roots: readonly RegistryRoot[];
  /**
   * Who holds each name (`"<kind>\0<name>"` to the file's path), a holder
   * whose file fails to load for now included: the next load keeps it
   * theirs against a newcomer. @default none
   */
  readonly holders?: ReadonlyMap<string, string>;
}

/** What changed between two snapshots, by name. */
export interface NameChanges {
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
}

/** A reload that changed something. */
export interface RegistryChange {
  readonly snapshot: RegistrySnapshot;
  readonly tools: NameChanges;
  readonly toolkits: NameChanges;
  readonly skills: NameChanges;
  /** True when a `SKILL.md` skill was added, removed or edited. */
  readonly agentSkillsChanged: boolean;
  /** True when the error list changed (a file broke or was fixed). */
  readonly errorsChanged: boolean;
}
