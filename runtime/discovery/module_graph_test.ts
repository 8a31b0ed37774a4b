import assert from "node:assert/strict";
import { join } from "node:path";
import { moduleGraph } from "./module_graph.ts";

async function graphOf(
  files: Record<string, string>,
): Promise<{ dir: string; files: string[] }> {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(join(dir, name), text);
  }
  const graph = await moduleGraph(join(dir, "main.ts"));
  return { dir, files: graph.files.map((f) => f.slice(dir.length + 1)) };
}

Deno.test("moduleGraph follows imports whose binding names are string literals", async () => {
  const { dir, files } = await graphOf({
    "main.ts": [
      'import { "quoted name" as x } from "./a.ts";',
      "import { 'single quoted' as y, plain } from './b.ts';",
      'export { "re export" as z } from "./c.ts";',
      'export { w as "exported name" } from "./d.ts";',
      // A literal that reads like the keyword must not end the clause early.
      'import { "from" as f } from "./e.ts";',
      "console.log(x, y, plain, f);",
    ].join("\n"),
    "a.ts": 'const v = 1; export { v as "quoted name" };',
    "b.ts": 'const v = 1; export { v as "single quoted", v as plain };',
    "c.ts": 'const v = 1; export { v as "re export" };',
    "d.ts": "export const w = 1;",
    "e.ts": 'const v = 1; export { v as "from" };',
  });
  try {
    assert.deepEqual(files, [
      "a.ts",
      "b.ts",
      "c.ts",
      "d.ts",
      "e.ts",
      "main.ts",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("moduleGraph still leaves out type-only imports and non-local specifiers", async () => {
  const { dir, files } = await graphOf({
    "main.ts": [
      'import type { "quoted" as T } from "./types.ts";',
      'import { "x" as x } from "npm:zod@4.6.7";',
      'import { a } from "./a.ts";',
      "console.log(x, a);",
    ].join("\n"),
    "types.ts": "export type T = 1;",
    "a.ts": "export const a = 1;",
  });
  try {
    assert.deepEqual(files, ["a.ts", "main.ts"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
