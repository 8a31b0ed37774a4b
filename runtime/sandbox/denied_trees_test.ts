import assert from "node:assert/strict";
import { join } from "node:path";
import { deniedByTree, deniedTreePaths } from "./denied_trees.ts";

Deno.test("deniedByTree() refuses the tree, its parents and its new entries, not its exceptions", () => {
  const trees = [{ root: "/p", except: ["/p/skills", "/elsewhere/skills"] }];
  assert.equal(deniedByTree("/p", trees), true);
  assert.equal(deniedByTree("/", trees), true);
  assert.equal(deniedByTree("/p/anything_new", trees), true);
  assert.equal(deniedByTree("/p/skillsX", trees), true);
  assert.equal(deniedByTree("/p/skills", trees), false);
  assert.equal(deniedByTree("/p/skills/a/b.ts", trees), false);
  assert.equal(deniedByTree("/elsewhere/skills", trees), false);
});

Deno.test("deniedTreePaths() lists what is beside the way to each exception", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(root, "a", "served"), { recursive: true });
    await Deno.mkdir(join(root, "a", "private"));
    await Deno.mkdir(join(root, "b"));
    await Deno.writeTextFile(join(root, "c,d"), "");
    const paths = deniedTreePaths([{
      root,
      except: [join(root, "a", "served")],
    }]);
    assert.deepEqual(paths.sort(), [
      join(root, "a", "private"),
      join(root, "b"),
    ]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
