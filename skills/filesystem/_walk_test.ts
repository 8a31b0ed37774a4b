import assert from "node:assert/strict";
import { walk } from "./_walk.ts";

Deno.test("walk says it was cut only when an entry lay past its bound", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const name of ["a", "b", "c"]) {
      await Deno.writeTextFile(`${dir}/${name}`, "");
    }
    const names = async (maxVisited: number) => {
      const entries = walk(dir, { includeHidden: false, maxVisited });
      const seen: string[] = [];
      for await (const e of entries) seen.push(e.rel);
      return { seen, truncated: entries.truncated };
    };
    assert.deepEqual(await names(3), {
      seen: ["a", "b", "c"],
      truncated: false,
    });
    assert.deepEqual(await names(2), { seen: ["a", "b"], truncated: true });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
