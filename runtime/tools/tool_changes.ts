/**
 * What the tools capability does when the registry reloads: it brings its
 * search index up to date with the tools that changed (one re-indexed tool
 * per touched file, not all of them), and tells every session with an
 * `invoke/event` of kind `tools.changed` when tools, toolkits or skills
 * changed.
 *
 * @module
 */

import type { OutgoingMessage } from "../capability.ts";
import { encodeEvent } from "../../protocol/responses.ts";
import type { RegistryChange, ToolEntry } from "../registry/types.ts";
import type { ToolIndex } from "../search/tool_index.ts";

/**
 * Brings an index up to date with a reload: removed tools leave it, added
 * and changed ones are (re-)indexed from the new snapshot.
 *
 * @param index the capability's index
 * @param change what the reload changed
 * @example One added tool
 * ```ts
 * import { reindex } from "./tool_changes.ts";
 * import { ToolIndex } from "../search/tool_index.ts";
 * import { buildSnapshot } from "../registry/normalize.ts";
 * import type { ToolEntry } from "../registry/types.ts";
 * import assert from "node:assert/strict";
 * const snapshot = buildSnapshot([{ origin: "file", root: "/s", module: {
 *   path: "/s/echo.ts", hash: "h", error: null,
 *   definitions: [{ export: "default", kind: "tool", name: "echo", permissions: {}, runnable: true,
 *     fields: { description: "Echo", input: { type: "object" } } }],
 * } }]);
 * const index = new ToolIndex<ToolEntry>();
 * const none = { added: [], changed: [], removed: [] };
 * reindex(index, { snapshot, tools: { ...none, added: ["echo"] }, toolkits: none,
 *   skills: none, agentSkillsChanged: false, errorsChanged: false });
 * assert.ok(index.has("echo"));
 * ```
 */
export function reindex(
  index: ToolIndex<ToolEntry>,
  change: RegistryChange,
): void {
  for (const name of change.tools.removed) index.remove(name);
  for (const name of [...change.tools.added, ...change.tools.changed]) {
    const tool = change.snapshot.tools.get(name);
    if (tool) index.replace(tool);
  }
}

/**
 * The `tools.changed` push of a reload, or null when it changed no tool,
 * toolkit or skill. Skills count: MCP serves them as tools.
 *
 * @param change what the reload changed
 * @returns the `invoke/event` to broadcast, its `seq` the snapshot's
 *   generation, or null
 * @example A reload that only changed the error list sends nothing
 * ```ts
 * import { toolsChangedEvent } from "./tool_changes.ts";
 * import { buildSnapshot } from "../registry/normalize.ts";
 * import assert from "node:assert/strict";
 * const none = { added: [], changed: [], removed: [] };
 * const change = { snapshot: buildSnapshot([]), tools: none, toolkits: none,
 *   skills: none, agentSkillsChanged: false, errorsChanged: true };
 * assert.equal(toolsChangedEvent(change), null);
 * assert.equal(toolsChangedEvent({ ...change, agentSkillsChanged: true })?.type, "invoke/event");
 * ```
 */
export function toolsChangedEvent(
  change: RegistryChange,
): OutgoingMessage | null {
  const touched = change.agentSkillsChanged ||
    [change.tools, change.toolkits, change.skills].some((c) =>
      c.added.length + c.changed.length + c.removed.length > 0
    );
  if (!touched) return null;
  return encodeEvent("invoke/event", null, {
    kind: "tools.changed",
    data: {
      added: change.tools.added,
      changed: change.tools.changed,
      removed: change.tools.removed,
      toolkits: [
        ...change.toolkits.added,
        ...change.toolkits.changed,
        ...change.toolkits.removed,
      ],
      skills: [
        ...change.skills.added,
        ...change.skills.changed,
        ...change.skills.removed,
      ],
    },
    seq: change.snapshot.generation,
  });
}
