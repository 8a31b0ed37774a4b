/**
 * No function over 80 lines without a reason written beside it (issue 9),
 * checked by `tests/support/long_functions.ts` over the whole source tree
 * (not tests/ or bench/).
 */

import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { longFunctions } from "./support/long_functions.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
// The whole source tree: every folder has been split or given reasons.
const CLEAN = [
  "client",
  "protocol",
  "runtime",
  "sandbox",
  "skills",
  "mod.ts",
  "host.ts",
];

/** The source files of a folder (not tests), or the one file named. */
function sources(dir: string): string[] {
  if (Deno.statSync(dir).isFile) return [dir];
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...sources(path));
    else if (/\.tsx?$/.test(entry.name) && !/_test\.tsx?$/.test(entry.name)) {
      out.push(path);
    }
  }
  return out;
}

Deno.test("no long function without a reason anywhere in the source", () => {
  const files = CLEAN.flatMap((d) => sources(join(ROOT, d)));
  assert.ok(files.length > 50, `${files.length} files`);
  const found = files.flatMap((file) =>
    longFunctions(relative(ROOT, file), Deno.readTextFileSync(file), 80)
  ).filter((f) => f.reason === null).map((f) =>
    `${f.file}:${f.line} ${f.name} (${f.lines} lines)`
  );
  assert.deepEqual(found, []);
});

Deno.test("longFunctions() finds a long method, arrow and nested function, and a reason", () => {
  const body = "    x++;\n".repeat(81);
  const text = [
    "class A {",
    `  m() {\n${body}  }`,
    "}",
    `export const f = () => {\n  function inner() {\n${body}  }\n};`,
    "// Long: a table, kept in one piece.",
    `function g() {\n${body}}`,
  ].join("\n");
  const found = longFunctions("x.ts", text, 80);
  assert.deepEqual(
    found.map((f) => [f.name, f.reason === null]),
    [["m", true], ["f", true], ["inner", true], ["g", false]],
  );
});
