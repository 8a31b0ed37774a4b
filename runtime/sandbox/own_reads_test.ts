import assert from "node:assert/strict";
import { join } from "node:path";
import { OwnReads } from "./own_reads.ts";

Deno.test("OwnReads gives a file in a shared folder its file and local imports only", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    await Deno.writeTextFile(join(dir, "lib.ts"), "export const x = 1;\n");
    await Deno.writeTextFile(
      join(dir, "tool.ts"),
      'import { x } from "./lib.ts";\nexport default x;\n',
    );
    await Deno.writeTextFile(join(dir, "other.ts"), "export default 2;\n");
    const own = new OwnReads({ sharedFolders: [dir] });
    const grant = await own.withGrant(join(dir, "tool.ts"), Object.freeze({}));
    assert.deepEqual(
      [...grant.read!].sort(),
      [join(dir, "lib.ts"), join(dir, "tool.ts")].sort(),
    );
    assert.ok(!grant.read!.includes(dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("OwnReads merges once per frozen grant and never shares across modules", () => {
  const own = new OwnReads({});
  const grant = Object.freeze({ read: ["/data"] });
  const a = own.withGrant("/s/a/mod.ts", grant);
  assert.equal(own.withGrant("/s/a/mod.ts", grant), a);
  const b = own.withGrant("/s/b/mod.ts", grant);
  assert.deepEqual(b, { read: ["/s/b", "/data"] });
  assert.ok(Object.isFrozen(a));
  assert.throws(() => (a as { read: string[] }).read.push("/"));
});
