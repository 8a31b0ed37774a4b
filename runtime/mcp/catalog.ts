/**
 * One MCP session's view of the host's tools and published skills, loaded
 * through its {@link A2eLink} on first use and kept until the host says its
 * tools changed. A skill named like a tool or a built-in MCP tool is listed
 * as `<name>_skill`.
 *
 * @module
 */

import type { SkillDefinition } from "../../protocol/skill.ts";
import type { ToolDefinition } from "../../protocol/tool.ts";
import type { A2eLink } from "./a2e_link.ts";
import { CONFIGURE_TOOL, SEARCH_TOOL } from "./builtin_tools.ts";

/** The tools and skills listed to one MCP session. */
export interface Catalog {
  /** By name. */
  tools: Map<string, ToolDefinition>;
  /** By MCP name. */
  skills: Map<string, SkillDefinition>;
}

/**
 * A session's catalog, loaded once and reloaded after {@link reset}.
 *
 * @example A skill named like a tool is listed as `<name>_skill`
 * ```ts
 * import { SessionCatalog } from "./catalog.ts";
 * import type { A2eLink } from "./a2e_link.ts";
 * import assert from "node:assert/strict";
 * const envelope = { id: "x", version: "1", ts: 0, req_id: "r" };
 * const link: A2eLink = {
 *   sessionId: "s", inFlight: 0, close() {},
 *   request: (m) => Promise.resolve(m.type === "tool/list/req"
 *     ? { ...envelope, type: "tool/list/resp", tools: [{ name: "echo" }] }
 *     : { ...envelope, type: "skill/discover/resp",
 *       skills: [{ name: "echo", status: "Published" }] }),
 * };
 * const catalog = await new SessionCatalog(link).get();
 * assert.deepEqual([...catalog.skills.keys()], ["echo_skill"]);
 * ```
 */
export class SessionCatalog {
  #link: A2eLink;
  #cached: Promise<Catalog> | null = null;
  // Names looked up again once and still unlisted (deferred tools): not
  // reloaded on every call; forgotten with the catalog on a change.
  #unlisted = new Set<string>();

  /** @param link the session's host session */
  constructor(link: A2eLink) {
    this.#link = link;
  }

  /**
   * The catalog, loading it on first use.
   *
   * @returns the tools and skills
   */
  get(): Promise<Catalog> {
    return this.#cached ??= loadCatalog(this.#link);
  }

  /** Forgets the catalog: the host's tools changed. */
  reset(): void {
    this.#cached = null;
    this.#unlisted = new Set();
  }

  /**
   * The skill a call to `name` runs, when `name` is in neither list of
   * `catalog`: a skill added since the list, or a deferred tool. Looks again
   * once per name until the next {@link reset}.
   *
   * @param name the called MCP name
   * @returns the skill, or undefined for a tool
   */
  async lookAgain(name: string): Promise<SkillDefinition | undefined> {
    if (this.#unlisted.has(name)) return undefined;
    this.reset();
    const skill = (await this.get()).skills.get(name);
    if (!skill) this.#unlisted.add(name);
    return skill;
  }
}

async function loadCatalog(link: A2eLink): Promise<Catalog> {
  const [toolsAnswer, skillsAnswer] = await Promise.all([
    link.request({ type: "tool/list/req" }),
    link.request({ type: "skill/discover/req" }),
  ]);
  const tools = new Map<string, ToolDefinition>();
  if (toolsAnswer.type === "tool/list/resp") {
    for (const tool of toolsAnswer.tools as ToolDefinition[]) {
      tools.set(tool.name, tool);
    }
  }
  const skills = new Map<string, SkillDefinition>();
  if (skillsAnswer.type === "skill/discover/resp") {
    for (const skill of skillsAnswer.skills as SkillDefinition[]) {
      if (skill.status !== "Published") continue;
      const reserved = tools.has(skill.name) ||
        skill.name === SEARCH_TOOL.name || skill.name === CONFIGURE_TOOL.name;
      skills.set(reserved ? `${skill.name}_skill` : skill.name, skill);
    }
  }
  return { tools, skills };
}
