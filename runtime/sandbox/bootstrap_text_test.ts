import assert from "node:assert/strict";
import { buildBootstrap, loadBootstrap } from "./bootstrap_text.ts";

const here = (path: string) => new URL(path, import.meta.url);

Deno.test("the bootstrap carries describe.ts as a data: module, and reads no file", async () => {
  const js = await loadBootstrap();
  const url = JSON.parse(/^const DESCRIBE = (".*");$/m.exec(js)![1]!);
  assert.match(url, /^data:text\/javascript,/);
  const shared = await import(url);
  assert.equal(typeof shared.describeExports, "function");
  assert.equal(typeof shared.normalizePermissions, "function");
  // Only dynamic imports (describe, zod, the user's module) are left.
  assert.doesNotMatch(js, /^\s*(import|export)\b(?!\s*\()(?!\s*:)/m);
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

Deno.test("a bootstrap with a run-time import of a file fails its worker's start", async () => {
  const js = buildBootstrap(
    'import "./other.ts";\npostMessage("started");',
    "export function f(): number { return 1; }",
  );
  const worker = new Worker(
    URL.createObjectURL(new Blob([js], { type: "text/javascript" })),
    { type: "module" },
  );
  const outcome = await new Promise<string>((resolve) => {
    worker.onmessage = (e) => resolve(String(e.data));
    worker.onerror = (e) => {
      e.preventDefault();
      resolve("failed");
    };
  });
  worker.terminate();
  assert.equal(outcome, "failed");
});

Deno.test("the worker loads the zod deno.json pins, and only deno.json pins it", async () => {
  const project = JSON.parse(await Deno.readTextFile(here("../../deno.json")));
  const js = await loadBootstrap();
  assert.ok(
    js.startsWith(`const ZOD = ${JSON.stringify(project.imports.zod)};`),
  );
  for (
    const path of [
      "../../sandbox/worker/bootstrap.ts",
      "../confine/sandbox_processes.ts",
    ]
  ) {
    const text = await Deno.readTextFile(here(path));
    assert.doesNotMatch(text, /npm:zod@/, `${path} pins zod again`);
  }
});
