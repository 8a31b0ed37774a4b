import assert from "node:assert/strict";
import type { DescribedDefinition } from "../sandbox/types.ts";
import { buildSnapshot, type LoadedModule } from "./normalize.ts";

function mod(
  path: string,
  definitions: Partial<DescribedDefinition>[],
  error: string | null = null,
): LoadedModule {
  return {
    origin: "file",
    root: "/s",
    module: {
      path,
      hash: `hash-of-${path}`,
      error,
      definitions: definitions.map((d) => ({
        export: "default",
        kind: "tool",
        name: "x",
        fields: {},
        permissions: {},
        runnable: true,
        ...d,
      })),
    },
  };
}

Deno.test("buildSnapshot() normalizes tool fields with A2E defaults", () => {
  const snap = buildSnapshot([
    mod("/s/a.ts", [{
      name: "read_csv",
      fields: {
        description: "Read a CSV file",
        input_schema: { type: "object", properties: { path: {} } },
        tags: ["csv"],
        defer_loading: true,
      },
      permissions: "dynamic",
    }]),
  ], { generation: 3 });
  const tool = snap.tools.get("read_csv");
  assert.ok(tool);
  assert.equal(snap.generation, 3);
  assert.equal(tool.description, "Read a CSV file");
  assert.deepEqual(tool.inputSchema, {
    type: "object",
    properties: { path: {} },
  });
  assert.deepEqual(tool.outputSchema, {});
  assert.equal(tool.streaming, true);
  assert.equal(tool.idempotent, false);
  assert.equal(tool.deferLoading, true);
  assert.equal(tool.version, "1.0.0");
  assert.equal(tool.hash, "hash-of-/s/a.ts");
  assert.equal(tool.permissions, "dynamic");
  assert.equal(tool.toolkit, null);
  assert.ok(Object.isFrozen(tool));
});

Deno.test("buildSnapshot() assigns toolkit membership by field, folder and list", () => {
  const snap = buildSnapshot([
    mod("/s/fs/toolkit.ts", [{ kind: "toolkit", name: "fs", runnable: false }]),
    mod("/s/fs/read.ts", [{ name: "read" }]),
    mod("/s/fs/deep/stat.ts", [{ name: "stat" }]),
    mod("/s/fs/other.ts", [{ name: "other", fields: { toolkit: "web" } }]),
    mod("/s/web.ts", [{
      kind: "toolkit",
      name: "web",
      fields: { tools: ["fetch", "read"] },
    }]),
    mod("/s/fetch.ts", [{ name: "fetch" }]),
    mod("/s/loose.ts", [{ name: "loose" }]),
  ]);
  const kit = (name: string) => snap.tools.get(name)?.toolkit;
  assert.equal(kit("read"), "fs", "the folder wins over a toolkit's list");
  assert.equal(kit("stat"), "fs");
  assert.equal(kit("other"), "web");
  assert.equal(kit("fetch"), "web");
  assert.equal(kit("loose"), null);
  assert.deepEqual(snap.toolkits.get("fs")?.tools, ["read", "stat"]);
  assert.deepEqual(snap.toolkits.get("web")?.tools, ["fetch", "other"]);
  assert.deepEqual(snap.errors, []);
});

Deno.test("buildSnapshot() serves neither side of a name clash and names both files", () => {
  const snap = buildSnapshot([
    mod("/s/b.ts", [{ name: "dup" }, { name: "ok", export: "ok" }]),
    mod("/s/a.ts", [{ name: "dup" }]),
    mod("/s/k1.ts", [{ kind: "toolkit", name: "kit" }]),
    mod("/s/k2.ts", [{ kind: "toolkit", name: "kit" }]),
  ]);
  assert.deepEqual([...snap.tools.keys()], ["ok"]);
  assert.equal(snap.toolkits.size, 0);
  assert.equal(
    snap.blocked.get("dup"),
    'Tool name "dup" is defined in "/s/a.ts" and "/s/b.ts": neither is served',
  );
  assert.match(snap.blocked.get("kit") ?? "", /^Toolkit name "kit"/);
  assert.deepEqual(
    snap.errors.map((e) => [e.path, e.name]),
    [["/s/a.ts", "dup"], ["/s/b.ts", "dup"], ["/s/k1.ts", "kit"], [
      "/s/k2.ts",
      "kit",
    ]],
  );
});

Deno.test("buildSnapshot() reports broken modules and bad definitions and keeps the rest", async (t) => {
  const cases: [string, LoadedModule, RegExp][] = [
    [
      "a module that failed to load",
      mod("/s/broken.ts", [], "SyntaxError: Unexpected token"),
      /^Cannot load "\/s\/broken.ts": SyntaxError/,
    ],
    [
      "a field of the wrong type",
      mod("/s/bad.ts", [{ name: "bad", fields: { tags: "csv" } }]),
      /^Cannot load tool "bad" from "\/s\/bad.ts": tags: /,
    ],
    [
      "a tool without run",
      mod("/s/norun.ts", [{ name: "norun", runnable: false }]),
      /no "run" function/,
    ],
    [
      "a name LLM APIs reject",
      mod("/s/space.ts", [{ name: "has space" }]),
      /^Cannot load tool "has space"/,
    ],
    [
      "two toolkits in one folder",
      mod("/s/two.ts", [{ kind: "toolkit", name: "k1" }, {
        kind: "toolkit",
        name: "k2",
        export: "k2",
      }]),
      /holds two toolkits "k1" and "k2"/,
    ],
  ];
  for (const [label, broken, pattern] of cases) {
    await t.step(label, () => {
      const snap = buildSnapshot([
        broken,
        mod("/s/good.ts", [{ name: "good" }]),
      ]);
      assert.ok(snap.tools.has("good"));
      assert.equal(snap.errors.length, 1, JSON.stringify(snap.errors));
      assert.match(snap.errors[0]!.message, pattern);
      assert.equal(snap.errors[0]!.path, broken.module.path);
    });
  }
});

Deno.test("buildSnapshot() keeps skills with their fields", () => {
  const snap = buildSnapshot([
    mod("/s/sk.ts", [{
      kind: "skill",
      name: "summarize",
      fields: { description: "S", max_turns: 3 },
      runnable: false,
    }]),
  ], { agentSkills: ["/s/z", "/s/a"] });
  const skill = snap.skills.get("summarize");
  assert.equal(skill?.fields.max_turns, 3);
  assert.equal(skill?.runnable, false);
  assert.deepEqual(snap.agentSkills, ["/s/a", "/s/z"]);
});
