/**
 * JSONC (JSON with comments and trailing commas) read with `jsonc-parser`,
 * failing at the first syntax error, a key repeated in one object or a key
 * named `__proto__`, with its `file:line:column`.
 *
 * @module
 */

import {
  getNodePath,
  type Node,
  type ParseError,
  parseTree,
  printParseErrorCode,
} from "jsonc-parser";
import { ConfigError } from "./config_error.ts";

/**
 * Parses JSONC text.
 *
 * @param source the text (comments and trailing commas allowed)
 * @param file the file name used in error messages
 * @returns the value
 * @throws {ConfigError} `file:line:column: Problem` at the first syntax error,
 *   repeated key or `__proto__` key
 * @example Comments are fine, a missing value is not
 * ```ts
 * import { parseJsonc } from "./jsonc.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseJsonc('{ "a": 1, // note\n }', "a.jsonc"), { a: 1 });
 * assert.throws(() => parseJsonc('{\n  "a": }', "a.jsonc"), /^ConfigError: a\.jsonc:2:8: Value expected$/);
 * ```
 */
export function parseJsonc(source: string, file: string): unknown {
  // Some editors start a UTF-8 file with a byte order mark, which
  // Deno.readTextFile keeps and JSON does not allow.
  const text = source.replace(/^\uFEFF/, "");
  const errors: ParseError[] = [];
  try {
    // One pass, as nodes: the value is read off them, and they show a
    // repeated key (the value alone keeps the last one silently).
    const root = parseTree(text, errors, { allowTrailingComma: true });
    const first = errors[0];
    const bad = badKey(root);
    const problem = first
      ? describeParseError(printParseErrorCode(first.error))
      : bad?.value === "__proto__"
      ? `${getNodePath(bad).join(".")}: a key named "__proto__" is not allowed`
      : bad && `Duplicate key "${bad.value}"`;
    if (problem) {
      const { line, column } = lineColumn(text, first?.offset ?? bad!.offset);
      throw new ConfigError(`${file}:${line}:${column}: ${problem}`);
    }
    return root && valueOf(root);
  } catch (error) {
    // The parser, and valueOf, recurse once per nesting level: a few
    // thousand levels exhaust the stack.
    if (!(error instanceof RangeError)) throw error;
    throw new ConfigError(`${file}: nested too deeply to read`);
  }
}

// A node's value, with plain objects (jsonc-parser's getNodeValue makes
// objects without a prototype). Read once no key is `__proto__`.
function valueOf(node: Node): unknown {
  if (node.type === "array") return (node.children ?? []).map(valueOf);
  if (node.type !== "object") return node.value;
  const object: Record<string, unknown> = {};
  for (const [key, value] of (node.children ?? []).map((p) => p.children!)) {
    object[key!.value] = valueOf(value!);
  }
  return object;
}

// The first key that repeats one before it in the same object: JSON keeps
// the last value silently, and a second "tokens": [] would turn auth off.
// Or one named `__proto__`: a record of the schema drops it silently.
function badKey(root: Node | undefined): Node | undefined {
  const nodes = root ? [root] : [];
  for (let node = nodes.pop(); node; node = nodes.pop()) {
    const keys = new Set<unknown>();
    for (const child of node.children ?? []) {
      nodes.push(child);
      const key = child.children?.[0];
      if (node.type !== "object" || !key) continue;
      if (keys.has(key.value) || key.value === "__proto__") return key;
      keys.add(key.value);
    }
  }
}

function lineColumn(text: string, offset: number) {
  const before = text.slice(0, offset).split("\n");
  return {
    line: before.length,
    column: (before[before.length - 1]?.length ?? 0) + 1,
  };
}

// jsonc-parser names errors in PascalCase ("ValueExpected"): make a sentence.
function describeParseError(code: string): string {
  const words = code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
