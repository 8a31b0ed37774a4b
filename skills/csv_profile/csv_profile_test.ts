import assert from "node:assert/strict";
import { dataOf, makeCtx } from "../../tests/support/skill_ctx.ts";
import readFile from "../filesystem/read_file.ts";
import csvProfile from "./csv_profile.ts";

/**
 * A ctx whose `read_file` is the filesystem toolkit's, rooted at `root`,
 * answering with the tool's data as the host does (runtime/skills/run.ts).
 */
function readingCtx(root: string) {
  const test = makeCtx();
  test.ctx.tools = {
    call: async (name, args) => {
      assert.equal(name, "read_file");
      return dataOf(await readFile.run(args as never, makeCtx({ root }).ctx));
    },
  };
  return test;
}

Deno.test("csv_profile reads a file page by page through read_file", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${root}/d.csv`, "a,b\n1,x\n2,y\n");
    const out = dataOf(
      await csvProfile.run({ path: "d.csv" }, readingCtx(root).ctx),
    );
    assert.equal(out.rows, 2);
    assert.equal(out.source, "d.csv");
    // A record of exactly a page is whole, so it is profiled.
    const page = "x".repeat(1_000_000 - 2) + ",1";
    await Deno.writeTextFile(`${root}/d.csv`, `a,b\n${page}\n2,3\n`);
    const whole = dataOf(
      await csvProfile.run({ path: "d.csv" }, readingCtx(root).ctx),
    );
    assert.equal(whole.rows, 2);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("csv_profile refuses a record longer than a page, whatever its characters", async (t) => {
  const root = await Deno.makeTempDir();
  try {
    // read_file cuts an overlong line at a character boundary: with 3-byte
    // characters the cut page is shorter than the page size.
    for (const char of ["x", "é", "€", "😀"]) {
      await t.step(`a line of "${char}"`, async () => {
        const long = char.repeat(Math.ceil(1_100_000 / char.length));
        await Deno.writeTextFile(`${root}/d.csv`, `a,b\n${long},1\n2,3\n`);
        await assert.rejects(
          csvProfile.run({ path: "d.csv" }, readingCtx(root).ctx),
          /Line 2 of "d\.csv" is longer than 1000000 bytes/,
        );
      });
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("csv_profile profiles inline text when given csv, not path", async () => {
  const out = dataOf(
    await csvProfile.run({ csv: "a;b\n1;x\n2;y\n" }, makeCtx().ctx),
  );
  assert.equal(out.source, "inline");
  assert.equal(out.delimiter, ";");
  assert.equal(out.rows, 2);
});
