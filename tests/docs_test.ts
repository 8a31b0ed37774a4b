/**
 * The examples a newcomer copies from the README and `docs/` work as printed:
 * every TypeScript block type-checks, the README's first tool is served and
 * answers, and its client examples run against a real host.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHost } from "../runtime/host.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const CONFIG = join(ROOT, "deno.json");
const README = await Deno.readTextFile(join(ROOT, "README.md"));

/** The ```ts blocks of a Markdown text, in order. */
function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** The first ```ts block after a heading. */
function blockAfter(heading: string): string {
  const at = README.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `README has no heading "${heading}"`);
  const block = tsBlocks(README.slice(at))[0];
  assert.ok(block, `README has no TypeScript block after "${heading}"`);
  return block;
}

async function run(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("every TypeScript block of the README and docs/ type-checks", async () => {
  const docs = [...Deno.readDirSync(join(ROOT, "docs"))]
    .filter((e) => e.name.endsWith(".md"))
    .map((e) => join("docs", e.name));
  const blocks = [
    README,
    ...docs.map((d) => Deno.readTextFileSync(join(ROOT, d))),
  ]
    .flatMap(tsBlocks);
  assert.ok(blocks.length >= 8, `only ${blocks.length} blocks found`);
  const result = await run(["check", "--doc-only", "README.md", ...docs]);
  assert.equal(result.code, 0, result.stderr);
});

Deno.test("the README's first tool is served and answers", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(
    join(dir, "add.ts"),
    blockAfter("## Write a first tool"),
  );
  const host = createHost({ config: { skills: [dir] } });
  try {
    const report = await host.ready;
    assert.deepEqual(report.errors, []);
    const outcome = await host.callTool("add", { a: 2, b: 3 });
    assert.equal(outcome.success, true, String(outcome.error));
    assert.deepEqual(outcome.data, { sum: 5 });
    assert.deepEqual(
      outcome.events.map((e) => [e.kind, e.data]),
      [["progress", { pct: 50, message: "adding" }]],
    );
    // Its arguments are checked against the schema it declares.
    const refused = await host.callTool("add", { a: 2 });
    assert.equal(refused.success, false);
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the README's client example runs against a host", async () => {
  // The code-mode example is run by tests/code/run_code_e2e_test.ts.
  const host = createHost({ config: { skills: [join(ROOT, "skills")] } });
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await host.ready;
    const example = blockAfter("## Connect an A2E client");
    assert.ok(example.includes('connect("ws://127.0.0.1:8787/a2e"'));
    await Deno.writeTextFile(
      file,
      example.replace(
        "ws://127.0.0.1:8787/a2e",
        url.replace("http", "ws") + "/a2e",
      ),
    );
    // The project's import map, as a reader's own project would have.
    const result = await run(["run", "--config", CONFIG, "-A", file]);
    assert.equal(result.code, 0, result.stderr);
    // What the comments beside it promise.
    assert.match(result.stdout, /name: "eval_typescript"/);
    assert.match(result.stdout, /toolName: "eval_typescript"/);
    assert.match(result.stdout, /success: true/);
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(file);
  }
});

Deno.test("every public symbol's doc comment has an example", async () => {
  // `deno test --doc` (the test task) runs these examples; this checks they
  // exist for everything the three entry points export.
  const missing: string[] = [];
  for (const entry of ["mod.ts", "sandbox/sdk/mod.ts", "client/mod.ts"]) {
    const result = await run(["doc", "--json", entry]);
    assert.equal(result.code, 0, result.stderr);
    const doc = JSON.parse(result.stdout) as {
      nodes: Record<string, { symbols?: DocSymbol[] }>;
    };
    for (const module of Object.values(doc.nodes)) {
      for (const symbol of module.symbols ?? []) {
        const tags = symbol.declarations.flatMap((d) => d.jsDoc?.tags ?? []);
        if (!tags.some((tag) => tag.kind === "example")) {
          missing.push(`${entry}: ${symbol.name}`);
        }
      }
    }
  }
  assert.deepEqual(missing, [], `${missing.length} without an example`);
});

interface DocSymbol {
  name: string;
  declarations: { jsDoc?: { tags?: { kind: string }[] } }[];
}
