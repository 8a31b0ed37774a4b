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
  const fail = (offset: number, problem: string): never => {
    const { line, column } = lineColumn(text, offset);
    throw new ConfigError(`${file}:${line}:${column}: ${problem}`);
  };
  const errors: ParseError[] = [];
  try {
    // One pass, as nodes: the value is read off them, and they show a
    // repeated key (the value alone keeps the last one silently).
    const root = parseTree(text, errors, { allowTrailingComma: true });
    const first = errors[0];
    if (first) {
      fail(first.offset, describeParseError(printParseErrorCode(first.error)));
    }
    return root && valueOf(root, fail);
  } catch (error) {
    // The parser, and valueOf, recurse once per nesting level: a few
    // thousand levels exhaust the stack.
    if (!(error instanceof RangeError)) throw error;
    throw new ConfigError(`${file}: nested too deeply to read`);
  }
}

// A node's value, with plain objects (jsonc-parser's getNodeValue makes
// objects without a prototype). It fails at a key that repeats one before
// it in the same object: JSON keeps the last value silently, and a second
// "tokens": [] would turn auth off. And at one named `__proto__`: a record
// of the schema drops it silently.
function valueOf(
  node: Node,
  fail: (offset: number, problem: string) => never,
): unknown {
  if (node.type === "array") {
    return (node.children ?? []).map((child) => valueOf(child, fail));
  }
  if (node.type !== "object") return node.value;
  const object: Record<string, unknown> = {};
  for (const [key, value] of (node.children ?? []).map((p) => p.children!)) {
    const name = key!.value;
    if (name === "__proto__") {
      const path = getNodePath(key!).join(".");
      fail(key!.offset, `${path}: a key named "__proto__" is not allowed`);
    }
    if (Object.hasOwn(object, name)) {
      fail(key!.offset, `Duplicate key "${name}"`);
    }
    object[name] = valueOf(value!, fail);
  }
  return object;
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
