/**
 * Finds functions over a number of lines in the repository's source (not
 * tests/ or bench/, not `*_test.ts`), with Babel's parser (the one static
 * discovery uses): every function declaration, expression, arrow, method
 * and accessor, nested ones too, measured from its first line to its last.
 * For each it says whether a comment right above it (or above the statement
 * that holds it, or first in its body), not its JSDoc, gives a reason for its length: one that
 * mentions it (`long`, `lines`, `one function`, `kept together`, `split`,
 * `why`, ...). Whether the reason is a good one is for a reader to judge.
 *
 * Run: `deno run -A tests/support/long_functions.ts [maxLines=80] [dirs...]`;
 * prints one line per long function and exits 1 when one has no reason.
 *
 * @module
 */

import { parse } from "@babel/parser";
import { join, relative } from "node:path";

/** A function over the limit. */
export interface LongFunction {
  /** The file, relative to the root. */
  file: string;
  /** Its name, or `(anonymous)`. */
  name: string;
  /** Its first line. */
  line: number;
  /** Its length in lines. */
  lines: number;
  /** The comment above it that gives a reason, or null. */
  reason: string | null;
}

const FUNCTION_TYPES = new Set([
  "FunctionDeclaration",
  "FunctionExpression",
  "ArrowFunctionExpression",
  "ObjectMethod",
  "ClassMethod",
  "ClassPrivateMethod",
]);
const REASON =
  /\b(long|lines|one function|kept together|in one place|split|why|sequence|single pass)\b/i;

interface Node {
  type: string;
  loc?: { start: { line: number }; end: { line: number } };
  leadingComments?: { type: string; value: string }[];
  id?: { name?: string } | null;
  key?: { name?: string; value?: string } | null;
  [key: string]: unknown;
}

/**
 * The functions of one source text over `maxLines` lines.
 *
 * @param file the file's name (shown)
 * @param text its source
 * @param maxLines the limit
 * @returns the long functions, in order
 * @example
 * ```ts
 * import { longFunctions } from "./long_functions.ts";
 * import assert from "node:assert/strict";
 * const body = "  x++;\n".repeat(5);
 * const text = `function a() {\n${body}}\n// Long: kept in one piece.\nconst b = () => {\n${body}};\n`;
 * const found = longFunctions("x.ts", text, 5);
 * assert.deepEqual(found.map((f) => [f.name, f.lines, f.reason !== null]), [
 *   ["a", 7, false], ["b", 7, true],
 * ]);
 * ```
 */
export function longFunctions(
  file: string,
  text: string,
  maxLines: number,
): LongFunction[] {
  const ast = parse(text, {
    sourceType: "module",
    plugins: [["typescript", {}], "jsx"],
    errorRecovery: true,
  }) as unknown as Node;
  const found: LongFunction[] = [];
  const walk = (node: Node, holders: Node[]) => {
    if (FUNCTION_TYPES.has(node.type) && node.loc) {
      const lines = node.loc.end.line - node.loc.start.line + 1;
      if (lines > maxLines) {
        const body = node.body as { body?: Node[] } | undefined;
        const first = Array.isArray(body?.body) ? body.body.slice(0, 1) : [];
        const comments = [node, ...holders.slice(-3), ...first].flatMap((n) =>
          n.leadingComments ?? []
        ).filter((c) => !c.value.startsWith("*")).map((c) => c.value);
        found.push({
          file,
          name: nameOf(node, holders),
          line: node.loc.start.line,
          lines,
          reason: comments.find((c) => REASON.test(c))?.trim() ?? null,
        });
      }
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === "loc" || key.endsWith("Comments")) continue;
      const children = Array.isArray(value) ? value : [value];
      for (const child of children) {
        if (child && typeof child === "object" && "type" in child) {
          walk(child as Node, [...holders, node]);
        }
      }
    }
  };
  walk(ast, []);
  return found.sort((a, b) => a.line - b.line);
}

function nameOf(node: Node, holders: Node[]): string {
  if (node.id?.name) return node.id.name;
  if (node.key) return String(node.key.name ?? node.key.value ?? "(key)");
  for (const holder of [...holders].reverse()) {
    const id = holder.id as { name?: string } | undefined;
    if (holder.type === "VariableDeclarator" && id?.name) return id.name;
    const key = holder.key as { name?: string } | undefined;
    if (key?.name) return key.name;
  }
  return "(anonymous)";
}

function sources(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(join(root, dir))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory && !entry.name.startsWith(".")) {
      out.push(...sources(root, path));
    } else if (
      entry.isFile && /\.(ts|tsx)$/.test(entry.name) &&
      !/_test\.tsx?$/.test(entry.name)
    ) out.push(path);
  }
  return out;
}

if (import.meta.main) {
  const root = join(import.meta.dirname!, "..", "..");
  const [max = "80", ...given] = Deno.args;
  const dirs = given.length > 0
    ? given
    : ["runtime", "sandbox", "protocol", "client", "skills"];
  const files = [
    ...dirs.flatMap((d) => sources(root, d)),
    ...(given.length > 0 ? [] : ["mod.ts", "host.ts"]),
  ];
  let missing = 0;
  for (const file of files.sort()) {
    const text = Deno.readTextFileSync(join(root, file));
    for (
      const f of longFunctions(
        relative(root, join(root, file)),
        text,
        Number(max),
      )
    ) {
      if (f.reason === null) missing++;
      const why = f.reason === null
        ? "NO REASON"
        : "reason: " + f.reason.replace(/\s+/g, " ").slice(0, 90);
      Deno.stdout.writeSync(
        new TextEncoder().encode(
          `${f.file}:${f.line} ${f.name} ${f.lines} lines · ${why}\n`,
        ),
      );
    }
  }
  if (missing > 0) Deno.exit(1);
}
