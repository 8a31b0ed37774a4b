import assert from "node:assert/strict";
import { reindex, toolsChangedEvent } from "./tool_changes.ts";
import { ToolIndex } from "../search/tool_index.ts";
import { buildSnapshot } from "../registry/normalize.ts";
import type { RegistryChange, ToolEntry } from "../registry/types.ts";

function snapshotOf(tools: Record<string, string>) {
  return buildSnapshot(
    Object.entries(tools).map(([name, description]) => ({
      origin: "file" as const,
      root: "/s",
      module: {
        path: `/s/${name}.ts`,
        hash: description,
        error: null,
        definitions: [{
          export: "default",
          kind: "tool" as const,
          name,
          permissions: {},
          runnable: true,
          fields: { description, input: { type: "object" } },
        }],
      },
    })),
  );
}

const none = { added: [], changed: [], removed: [] };

function change(fields: Partial<RegistryChange>): RegistryChange {
  return {
    snapshot: buildSnapshot([]),
    tools: none,
    toolkits: none,
    skills: none,
    agentSkillsChanged: false,
    errorsChanged: false,
    ...fields,
  };
}

Deno.test("reindex() removes, adds and replaces the tools a reload touched, and only those", () => {
  const before = snapshotOf({ a: "Alpha", b: "Beta", c: "Gamma" });
  const index = new ToolIndex<ToolEntry>(before.tools.values());
  const untouched = index.get("c");
  const after = snapshotOf({ b: "Bravo", c: "Gamma", d: "Delta" });
  reindex(
    index,
    change({
      snapshot: after,
      tools: { added: ["d"], changed: ["b"], removed: ["a"] },
    }),
  );
  assert.equal(index.has("a"), false);
  assert.equal(index.get("b")?.description, "Bravo");
  assert.equal(index.get("d")?.description, "Delta");
  assert.equal(index.get("c"), untouched);
  assert.deepEqual(
    index.search("bravo").map((hit) => hit.entry.name),
    ["b"],
  );
});

Deno.test("toolsChangedEvent() lists tools, toolkits and skills, seq the generation", () => {
  const snapshot = snapshotOf({ t: "T" });
  const event = toolsChangedEvent(change({
    snapshot,
    tools: { added: ["t"], changed: [], removed: ["old"] },
    toolkits: { added: [], changed: ["kit"], removed: [] },
    skills: { added: [], changed: [], removed: ["s"] },
  }));
  assert.ok(event);
  assert.equal(event.type, "invoke/event");
  assert.equal(event.kind, "tools.changed");
  assert.equal(event.seq, snapshot.generation);
  assert.deepEqual(event.data, {
    added: ["t"],
    changed: [],
    removed: ["old"],
    toolkits: ["kit"],
    skills: ["s"],
  });
});

Deno.test("toolsChangedEvent() is null for a reload that changed only errors", () => {
  assert.equal(toolsChangedEvent(change({ errorsChanged: true })), null);
  assert.notEqual(
    toolsChangedEvent(change({ skills: { ...none, added: ["s"] } })),
    null,
  );
});
