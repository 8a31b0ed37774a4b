/**
 * Trust from place: which toolkit a tool's folder gives it, and which
 * tools a toolkit's `tools` list may claim. Used by `buildSnapshot` in
 * `normalize.ts`.
 *
 * @module
 */

import { dirname, relative } from "node:path";
import type { RegistryError } from "./types.ts";
import {
  type Candidate,
  type KitCandidate,
  shown,
  type ToolCandidate,
} from "./names.ts";

/**
 * Where toolkits are defined, so that a tool's place decides its toolkit
 * and a toolkit's `tools` list claims only loose tools of its own tree.
 *
 * @example A tool naming another folder's toolkit is refused
 * ```ts
 * import { Places } from "./places.ts";
 * import assert from "node:assert/strict";
 * const kit = { entry: { name: "http", path: "/b/http/toolkit.ts", origin: "builtin" }, listed: [], root: "/b" } as never;
 * const places = new Places([kit], new Map([["http", kit]]));
 * const tool = { entry: { name: "x", path: "/s/x.ts", origin: "file" }, listed: [], root: "/s" } as never;
 * const got = places.toolkitOf(tool, "http");
 * assert.ok(typeof got === "object" && got !== null && /"http"/.test(got.refused));
 * ```
 */
export class Places {
  #byDir = new Map<string, KitCandidate[]>();
  #served: ReadonlyMap<string, KitCandidate>;

  constructor(
    all: readonly KitCandidate[],
    served: ReadonlyMap<string, KitCandidate>,
  ) {
    for (const kit of all) {
      const dir = dirname(kit.entry.path);
      this.#byDir.set(dir, [...(this.#byDir.get(dir) ?? []), kit]);
    }
    this.#served = served;
  }

  /**
   * The tool's toolkit by place.
   *
   * @param tool the tool
   * @param explicit its `toolkit` field, or null
   * @returns the toolkit's name, null for none, or why the tool is refused
   */
  toolkitOf(
    tool: Candidate<ToolCandidate>,
    explicit: string | null,
  ): string | null | { refused: string } {
    const folder = this.#folderKits(tool);
    const { name, path } = tool.entry;
    let target: KitCandidate | undefined;
    if (explicit !== null) {
      target = folder.find((k) => k.entry.name === explicit) ??
        this.#sameFolder(tool, explicit) ??
        (folder.length === 0 ? this.#lister(tool, explicit) : undefined);
      if (target === undefined) {
        return { refused: this.#wrongKit(tool, explicit, folder) };
      }
    } else if (folder.length === 1) target = folder[0]!;
    else return null; // none, or two in one folder (reported); claims later
    if (this.#served.get(target.entry.name) !== target) {
      return {
        refused: `Tool "${name}" in "${path}" is refused: the toolkit of ` +
          `its folder, "${target.entry.name}" in "${target.entry.path}", ` +
          "is not served",
      };
    }
    return target.entry.name;
  }

  /**
   * The tools a toolkit's `tools` list may claim, or why a claim is refused.
   *
   * @param kit the served toolkit
   * @param tools the served tools by name
   * @returns each granted tool, or a refusal's reason
   */
  *claims(
    kit: KitCandidate,
    tools: ReadonlyMap<string, Candidate<ToolCandidate>>,
  ): Generator<Candidate<ToolCandidate> | string> {
    for (const name of kit.listed) {
      const tool = tools.get(name);
      if (tool === undefined) continue;
      const folder = this.#folderKits(tool);
      if (folder.includes(kit)) continue; // its own folder's tool anyway
      if (folder.length === 0 && this.#inTree(tool, kit)) {
        yield tool;
        continue;
      }
      const why = folder.length > 0
        ? `it belongs to toolkit "${folder[0]!.entry.name}" of its folder`
        : `it is ${shown(tool.entry, tool.root)}, outside the toolkit's ` +
          "folder";
      yield `Toolkit "${kit.entry.name}" in "${kit.entry.path}" cannot ` +
        `claim tool "${name}": ${why}`;
    }
  }

  /**
   * Reports folders holding two toolkits: they give their tools none.
   *
   * @param errors where the reports go
   */
  reportCrowdedFolders(errors: RegistryError[]): void {
    for (const [dir, all] of this.#byDir) {
      // Each imported MCP server is a module with one toolkit of its own;
      // servers sit side by side under the MCP root and crowd no folder.
      const kits = all.filter((k) => k.entry.origin !== "mcp");
      const names = [...new Set(kits.map((k) => k.entry.name))];
      if (names.length < 2) continue;
      errors.push({
        path: kits[1]!.entry.path,
        name: names[1]!,
        message: `Folder "${dir}" holds two toolkits "${names[0]}" and ` +
          `"${names[1]}": its tools need an explicit "toolkit" field`,
      });
    }
  }

  // The toolkits of the tool's folder or the nearest folder above it that
  // defines any, in the same skills folder and origin. The skills folder
  // itself is no toolkit folder: a toolkit module at the top would
  // otherwise claim every loose tool.
  #folderKits(tool: Candidate<ToolCandidate>): KitCandidate[] {
    for (let dir = dirname(tool.entry.path);; dir = dirname(dir)) {
      const rel = relative(tool.root, dir);
      if (rel === "" || rel.startsWith("..") || dirname(dir) === dir) return [];
      const here = (this.#byDir.get(dir) ?? []).filter((k) =>
        k.root === tool.root && k.entry.origin === tool.entry.origin
      );
      if (here.length > 0) return here;
    }
  }

  // A toolkit defined in the tool's own folder, even at the top of the
  // skills folder (a loose toolkit beside its loose tools, an imported
  // server's module).
  #sameFolder(
    tool: Candidate<ToolCandidate>,
    name: string,
  ): KitCandidate | undefined {
    return (this.#byDir.get(dirname(tool.entry.path)) ?? []).find((k) =>
      k.entry.name === name && k.root === tool.root &&
      k.entry.origin === tool.entry.origin
    );
  }

  // The served toolkit of that name, when its list validly claims the tool.
  #lister(
    tool: Candidate<ToolCandidate>,
    name: string,
  ): KitCandidate | undefined {
    const kit = this.#served.get(name);
    return kit && kit.listed.includes(tool.entry.name) &&
        this.#inTree(tool, kit)
      ? kit
      : undefined;
  }

  #inTree(tool: Candidate<ToolCandidate>, kit: KitCandidate): boolean {
    return tool.root === kit.root && tool.entry.origin === kit.entry.origin &&
      tool.entry.path.startsWith(dirname(kit.entry.path) + "/");
  }

  #wrongKit(
    tool: Candidate<ToolCandidate>,
    explicit: string,
    folder: readonly KitCandidate[],
  ): string {
    const other = this.#served.get(explicit);
    const where = other ? `, defined in ${shown(other.entry, other.root)}` : "";
    const own = folder.length > 0
      ? `its folder's is "${folder.map((k) => k.entry.name).join('" or "')}"`
      : "none is defined in its folder or a folder above it";
    return `Tool "${tool.entry.name}" in "${tool.entry.path}" is refused: ` +
      `its "toolkit" field names "${explicit}"${where}, but a tool belongs ` +
      `to the toolkit of its own folder (${own})`;
  }
}
