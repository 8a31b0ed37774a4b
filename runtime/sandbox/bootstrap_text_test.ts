import assert from "node:assert/strict";
import { buildBootstrap, readBootstrap } from "./bootstrap_text.ts";

const here = (path: string) => new URL(path, import.meta.url);

Deno.test("the bootstrap carries the one describe, inlined, and imports nothing", async () => {
  const js = await readBootstrap();
  assert.equal(js.match(/\bfunction describeExports\(/g)?.length, 1);
  assert.equal(js.match(/\bfunction normalizePermissions\(/g)?.length, 1);
  assert.doesNotMatch(js, /^\s*(import|export)\b(?!\s*:)/m);
  // It runs as a script of its own: it parses with nothing around it.
  assert.doesNotThrow(() => new Function(js));
});

Deno.test("describe has one source: neither the bootstrap nor the static path restates it", async () => {
  // The list of schema fields is describe's; only describe.ts names it.
  const marker = '"input_schema"';
  const describe = await Deno.readTextFile(
    here("../../protocol/describe.ts"),
  );
  assert.ok(describe.includes(marker));
  for (
    const path of [
      "../../sandbox/worker/bootstrap.ts",
      "../discovery/static.ts",
    ]
  ) {
    const text = await Deno.readTextFile(here(path));
    assert.ok(!text.includes(marker), `${path} restates describe`);
  }
  for (
    const path of [
      "../../sandbox/worker/bootstrap.ts",
      "../discovery/static.ts",
    ]
  ) {
    const text = await Deno.readTextFile(here(path));
    assert.match(text, /\bdescribeExports\(/, `${path} does not use it`);
  }
});

Deno.test("buildBootstrap refuses a bootstrap without the describe import, or with another import", () => {
  const describe = "export function f(): number { return 1; }";
  assert.throws(() => buildBootstrap("postMessage(1);", describe), /describe/);
  assert.throws(
    () =>
      buildBootstrap(
        'import { f } from "../../protocol/describe.ts";\nimport "./other.ts";',
        describe,
      ),
    /import nothing/,
  );
  assert.throws(
    () =>
      buildBootstrap(
        'import { f } from "../../protocol/describe.ts";',
        'import "./x.ts";\nexport function f() {}',
      ),
    /import nothing/,
  );
});
