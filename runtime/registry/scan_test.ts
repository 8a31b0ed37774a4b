import assert from "node:assert/strict";
import { join } from "node:path";
import { isDefinitionFile, scanSkillDirs } from "./scan.ts";

Deno.test("isDefinitionFile() keeps modules and skips private, test and other files", () => {
  for (const name of ["a.ts", "b.js", "toolkit.ts"]) {
    assert.ok(isDefinitionFile(name), name);
  }
  for (
    const name of ["_a.ts", "a_test.ts", "a.test.js", "a.d.ts", "a.md", ".a.ts"]
  ) {
    assert.ok(!isDefinitionFile(name), name);
  }
});

Deno.test("scanSkillDirs() walks folders, records Agent Skills and tolerates a missing folder", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "kit/sub"), { recursive: true });
    await Deno.mkdir(join(dir, "agent/scripts"), { recursive: true });
    await Deno.mkdir(join(dir, ".hidden"));
    await Deno.mkdir(join(dir, "node_modules"));
    const files = [
      "top.ts",
      "kit/toolkit.ts",
      "kit/sub/deep.js",
      "kit/_helper.ts",
      "kit/deep_test.ts",
      "agent/SKILL.md",
      "agent/scripts/run.ts",
      ".hidden/x.ts",
      "node_modules/y.ts",
    ];
    for (const f of files) await Deno.writeTextFile(join(dir, f), "x");
    await Deno.symlink(join(dir, "top.ts"), join(dir, "link.ts"));
    const result = await scanSkillDirs([
      { path: dir, origin: "builtin" },
      { path: join(dir, "missing") },
    ]);
    assert.deepEqual(
      result.files.map((f) => f.path.slice(dir.length + 1)),
      ["kit/sub/deep.js", "kit/toolkit.ts", "link.ts", "top.ts"],
    );
    assert.ok(result.files.every((f) => f.origin === "builtin"));
    assert.ok(result.files.every((f) => f.root === dir && f.size === 1));
    assert.deepEqual(result.agentSkills, [join(dir, "agent")]);
    assert.deepEqual(result.errors, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
