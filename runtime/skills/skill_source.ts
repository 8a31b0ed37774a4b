/**
 * `source` says who put a skill there:
 *
 * | source | where the skill was found |
 * |---|---|
 * | `system` | skillbox's own `skills/` folder (registry origin `builtin`) |
 * | `user` | a skills folder under the operator's home directory (e.g. `~/.skillbox/skills`) |
 * | `project` | any other skills folder the operator configured (e.g. `./skills` beside `skillbox.jsonc`) |
 *
 * @module
 */

import { relative, resolve } from "node:path";
import type { SkillSource } from "./skill_record.ts";

/**
 * Tells a skill's source from where it was found (see the module doc).
 *
 * @param path the skill's file or folder
 * @param options registry origin, home directory
 * @returns `system` for builtin, `user` under the home directory, else `project`
 * @example
 * ```ts
 * import { skillSource } from "./skill_source.ts";
 * import assert from "node:assert/strict";
 * assert.equal(skillSource("/app/skills/a.ts", { origin: "builtin" }), "system");
 * assert.equal(skillSource("/home/ann/.skillbox/skills/a.ts", { origin: "file", home: "/home/ann" }), "user");
 * assert.equal(skillSource("/srv/proj/skills/a.ts", { origin: "file", home: "/home/ann" }), "project");
 * ```
 */
export function skillSource(
  path: string,
  options: { origin: "file" | "builtin"; home?: string | null },
): SkillSource {
  if (options.origin === "builtin") return "system";
  const home = options.home === undefined ? homeDir() : options.home;
  if (home) {
    const rel = relative(resolve(home), resolve(path));
    if (rel !== "" && !rel.startsWith("..") && !rel.startsWith("/")) {
      return "user";
    }
  }
  return "project";
}

function homeDir(): string | null {
  try {
    return Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? null;
  } catch {
    return null; // no env permission: nothing counts as a user folder
  }
}
