/**
 * The layout rules of the house (COMMON.md, issue 9), checked on the files
 * as text so a violation fails `deno task ok`:
 *
 * - `protocol/` imports nothing from `runtime/`, `sandbox/` or `client/`;
 *   `client/` and `sandbox/` import nothing from `runtime/`.
 * - `runtime/` imports nothing from `sandbox/`: what runs in the host never
 *   runs sandbox code (what both sides run lives in `protocol/`). The host
 *   names `sandbox/` files by path only to ship them into a sandbox, and
 *   only where {@link SHIPPED} says so.
 * - No file-wide lint ignore anywhere, except `no-console` in `bench/`:
 *   bench programs print their figures, and deno.json cannot scope a lint
 *   rule to one folder.
 */

import assert from "node:assert/strict";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
// Built from two halves so this file does not contain what it forbids.
const FILE_IGNORE = "deno-lint-" + "ignore-file";

/** Top-level folders a top-level folder must not import from. */
const FORBIDDEN_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  protocol: ["runtime", "sandbox", "client"],
  client: ["runtime"],
  sandbox: ["runtime"],
  runtime: ["sandbox"],
};

/**
 * The `sandbox/` files a `runtime/` file may name by path (a string that
 * is not an import): each is handed to a sandbox, never run in the host.
 */
const SHIPPED: Readonly<Record<string, readonly string[]>> = {
  // Read as text, describe.ts inlined, and started in each Worker from a
  // `blob:` URL.
  "runtime/sandbox/bootstrap_text.ts": ["sandbox/worker/bootstrap.ts"],
  // Its test reads the same text.
  "runtime/sandbox/bootstrap_text_test.ts": ["sandbox/worker/bootstrap.ts"],
  // The main script of a sandbox process, which the host spawns.
  "runtime/sandbox/sandbox_process.ts": ["sandbox/process/main.ts"],
  // The main script of a discovery process, which the host spawns.
  "runtime/discovery/queue.ts": [
    "sandbox/process/discovery_main.ts",
  ],
  // The egress relay's main script, run in the namespace of a confined MCP
  // server or script, and the files bound read-only there so it can run.
  "runtime/confine/confine.ts": [
    "sandbox/process/relay_main.ts",
    "sandbox/process/egress_relay.ts",
  ],
};

/** Relative paths written as string literals. */
const PATH_LITERAL = /(['"`])(\.{1,2}\/[^'"`\s]*)\1/g;

const SOURCE = /\.(ts|tsx|js|jsx|mjs|mts)$/;
const SKIPPED_DIRS = new Set(["node_modules", ".git"]);

/** Every source file under the root, as a `/`-separated relative path. */
function listSources(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      if (entry.isSymlink) continue; // never leave the tree
      const path = join(dir, entry.name);
      if (entry.isDirectory) {
        // Dot folders are caches and CI scripts, not source.
        if (!SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith(".")) {
          walk(path);
        }
      } else if (entry.isFile && SOURCE.test(entry.name)) {
        out.push(relative(root, path).split(sep).join("/"));
      }
    }
  };
  walk(root);
  return out.sort();
}

/**
 * The module specifiers a file names: static and type imports, re-exports,
 * side-effect imports and dynamic `import("...")` with a literal.
 */
export function specifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\b[^'"`;]*?\bfrom\s*(['"])([^'"]+)\1/g,
    /\bimport\s*(['"])([^'"]+)\1/g,
    /\bimport\s*\(\s*(['"`])([^'"`]+)\1/g,
  ];
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) found.push(match[2]!);
  }
  return found;
}

/**
 * The layout rules one file breaks, as sentences.
 *
 * @param path the file, `/`-separated, relative to the repository root
 * @param text its contents
 */
export function violations(path: string, text: string): string[] {
  const out: string[] = [];
  const top = path.split("/")[0]!;
  const forbidden = FORBIDDEN_IMPORTS[top] ?? [];
  for (const spec of specifiers(text)) {
    const target = importedTop(path, spec);
    if (target !== undefined && forbidden.includes(target)) {
      out.push(`${path} imports ${target}/ ("${spec}")`);
    }
  }
  if (top === "runtime") out.push(...unshipped(path, text));
  for (const line of text.split("\n")) {
    const at = line.indexOf(FILE_IGNORE);
    if (at === -1 || !/^\s*\/[/*]/.test(line)) continue;
    const rules = line.slice(at + FILE_IGNORE.length).trim();
    if (top === "bench" && rules === "no-console") continue;
    out.push(`${path} has a file-wide lint ignore (${rules || "all rules"})`);
  }
  return out;
}

/**
 * The `sandbox/` files a `runtime/` file names by path, other than in an
 * import (which the import rule reports) and other than {@link SHIPPED}.
 */
function unshipped(path: string, text: string): string[] {
  const imports = new Set(specifiers(text));
  const out: string[] = [];
  for (const match of text.matchAll(PATH_LITERAL)) {
    const spec = match[2]!;
    if (imports.has(spec) || importedTop(path, spec) !== "sandbox") continue;
    const target = repoPath(path, spec);
    if (SHIPPED[path]?.includes(target)) continue;
    out.push(`${path} names ${target} without shipping it ("${spec}")`);
  }
  return out;
}

/** A relative specifier as a `/`-separated path from the root. */
function repoPath(from: string, spec: string): string {
  const target = resolve(resolve(ROOT, dirname(from)), spec);
  return relative(ROOT, target).split(sep).join("/");
}

/** The top-level folder a relative specifier lands in, if it is local. */
function importedTop(from: string, spec: string): string | undefined {
  if (!spec.startsWith("./") && !spec.startsWith("../")) {
    if (!spec.startsWith("/") && !spec.startsWith("file:")) return undefined;
  }
  const base = resolve(ROOT, dirname(from));
  const target = spec.startsWith("file:")
    ? fileURLToPath(spec)
    : resolve(base, spec);
  const rel = relative(ROOT, target).split(sep).join("/");
  if (rel.startsWith("../")) return "(outside the repository)";
  return rel.split("/")[0];
}

Deno.test("the repository keeps its layout rules", () => {
  const files = listSources(ROOT);
  assert.ok(files.includes("tests/layout_test.ts"), "the walk found the tree");
  const found = files.flatMap((path) =>
    violations(path, Deno.readTextFileSync(join(ROOT, path)))
  );
  assert.deepEqual(found, []);
});

Deno.test("violations() catches each way of breaking a rule", async (t) => {
  await t.step("protocol/ importing runtime/, sandbox/ or client/", () => {
    const text = [
      'import { a } from "../runtime/a.ts";',
      'import type {\n  B,\n} from "../sandbox/b.ts";',
      'export * from "../client/c.ts";',
      'import "../runtime/side.ts";',
      'const d = await import("../runtime/d.ts");',
      "export{e}from'../client/e.ts'",
      'import { ok } from "./codes.ts";',
      'import { z } from "zod";',
    ].join("\n");
    assert.deepEqual(violations("protocol/x.ts", text), [
      'protocol/x.ts imports runtime/ ("../runtime/a.ts")',
      'protocol/x.ts imports sandbox/ ("../sandbox/b.ts")',
      'protocol/x.ts imports client/ ("../client/c.ts")',
      'protocol/x.ts imports client/ ("../client/e.ts")',
      'protocol/x.ts imports runtime/ ("../runtime/side.ts")',
      'protocol/x.ts imports runtime/ ("../runtime/d.ts")',
    ]);
  });
  await t.step("client/ and sandbox/ importing runtime/, even deep", () => {
    const deep = 'import { x } from "../../runtime/llm/config.ts";';
    assert.equal(violations("sandbox/worker/x.ts", deep).length, 1);
    assert.equal(violations("client/x.ts", deep.replace("../", "")).length, 1);
    // A path that climbs back in still counts by where it lands.
    const sneaky = 'import "./../../client/../runtime/x.ts";';
    assert.equal(violations("sandbox/sdk/y.ts", sneaky).length, 1);
    // sandbox/ may import protocol/.
    assert.deepEqual(
      violations("sandbox/x.ts", 'import "../protocol/a.ts";'),
      [],
    );
  });
  await t.step("runtime/ importing sandbox/, or naming it unshipped", () => {
    assert.deepEqual(
      violations(
        "runtime/x.ts",
        'import { isOutput } from "../sandbox/sdk/types.ts";',
      ),
      ['runtime/x.ts imports sandbox/ ("../sandbox/sdk/types.ts")'],
    );
    assert.equal(
      violations(
        "runtime/a/b.ts",
        'import type { T } from "../../sandbox/t.ts";',
      )
        .length,
      1,
    );
    // runtime/sandbox/ is the host's, not sandbox/.
    assert.deepEqual(
      violations("runtime/a/b.ts", 'import { f } from "../sandbox/pool.ts";'),
      [],
    );
    const spawn = 'new URL("../../sandbox/process/main.ts", import.meta.url)';
    assert.deepEqual(
      violations("runtime/sandbox/sandbox_process.ts", spawn),
      [],
    );
    assert.deepEqual(violations("runtime/sandbox/other.ts", spawn), [
      "runtime/sandbox/other.ts names sandbox/process/main.ts without " +
      'shipping it ("../../sandbox/process/main.ts")',
    ]);
    const read = 'read("../../sandbox/worker/describe.ts")';
    assert.equal(
      violations("runtime/sandbox/bootstrap_text.ts", read).length,
      1,
    );
  });
  await t.step("a file-wide lint ignore", () => {
    const ignore = `// ${FILE_IGNORE} no-explicit-any\n`;
    assert.deepEqual(violations("runtime/a.ts", ignore), [
      "runtime/a.ts has a file-wide lint ignore (no-explicit-any)",
    ]);
    assert.equal(
      violations("tests/a_test.ts", `// ${FILE_IGNORE}\n`).length,
      1,
    );
    assert.equal(violations("bench/a.ts", ignore).length, 1);
    assert.deepEqual(
      violations("bench/a.ts", `// ${FILE_IGNORE} no-console\n`),
      [],
    );
    // A line-level ignore is fine.
    assert.deepEqual(
      violations("runtime/a.ts", "// deno-lint-ignore no-explicit-any\n"),
      [],
    );
  });
});
