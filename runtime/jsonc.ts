/**
 * JSONC (JSON with comments and trailing commas) read with `jsonc-parser`,
 * failing at the first syntax error, a key repeated in one object or a key
 * named `__proto__`, with its `file:line:column`.
 *
 * @module
 */

import {
  createScanner,
  getNodePath,
  type Node,
  parse,
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
  // A valid file is read in one pass; any other is read again below, more
  // slowly, for the exact error and where it is.
  const plain = readPlain(text);
  if (plain && "value" in plain) return plain.value;
  if (plain) {
    const { line, column } = lineColumn(text, plain.offset);
    throw new ConfigError(
      `${file}:${line}:${column}: Duplicate key "${plain.repeated}"`,
    );
  }
  const errors: ParseError[] = [];
  let value: unknown;
  let root: Node | undefined;
  try {
    value = parse(text, errors, { allowTrailingComma: true });
    // The same text as nodes, to find a repeated key `parse` let through:
    // a third pass, only when no syntax error comes first.
    if (errors.length === 0) {
      root = parseTree(text, [], { allowTrailingComma: true });
    }
  } catch (error) {
    // The parser recurses once per nesting level: a few thousand levels
    // exhaust the stack.
    if (!(error instanceof RangeError)) throw error;
    throw new ConfigError(`${file}: nested too deeply to read`);
  }
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
  return value;
}

// jsonc-parser's SyntaxKind, a const enum its types declare but a module
// compiled on its own cannot read.
const SyntaxKind = {
  OpenBraceToken: 1,
  CloseBraceToken: 2,
  OpenBracketToken: 3,
  CloseBracketToken: 4,
  CommaToken: 5,
  ColonToken: 6,
  StringLiteral: 10,
  LineCommentTrivia: 12,
  BlockCommentTrivia: 13,
  LineBreakTrivia: 14,
  Trivia: 15,
  Unknown: 16,
  EOF: 17,
} as const;

// Nesting past this is left to the reader below: its recursion decides, as
// it always did, whether the file is too deep to read.
const MAX_PLAIN_DEPTH = 256;

// One pass of the scanner over the text: comments and trailing commas cut
// (each replaced by a space, so `1/**/2` stays two tokens), keys checked,
// then JSON.parse on the rest. The value, or the first key repeated in a
// file otherwise valid; undefined when the pass or JSON.parse finds
// anything else wrong: `parse` with `parseTree` after it took five times
// longer (8 s for 16 MiB), as they build every value twice, once as nodes.
function readPlain(
  text: string,
): { value: unknown } | { repeated: string; offset: number } | undefined {
  const scanner = createScanner(text, false);
  // Pairs of start and end offsets of the text cut, in order.
  const cuts: number[] = [];
  // Per open container: the keys an object has had so far, null in an array.
  const open: (Set<string> | null)[] = [];
  let expectKey = false;
  let afterValue = false;
  // The comma last read right after a value, until the next token: cut
  // when that token closes the container. `commaCut` is its pair's index
  // once a comment after it was cut (so the pairs stay in order).
  let comma = -1;
  let commaCut = -1;
  let repeated: { repeated: string; offset: number } | undefined;
  for (let kind: number = scanner.scan(); kind !== SyntaxKind.EOF;) {
    if (scanner.getTokenError() !== 0) return undefined; // ScanError.None
    const offset = scanner.getTokenOffset();
    switch (kind) {
      case SyntaxKind.LineCommentTrivia:
      case SyntaxKind.BlockCommentTrivia:
        if (comma >= 0 && commaCut < 0) {
          commaCut = cuts.length;
          cuts.push(comma, comma);
        }
        cuts.push(offset, offset + scanner.getTokenLength());
        kind = scanner.scan();
        continue;
      case SyntaxKind.LineBreakTrivia:
      case SyntaxKind.Trivia:
        kind = scanner.scan();
        continue;
      case SyntaxKind.Unknown:
        return undefined;
      case SyntaxKind.CloseBraceToken:
      case SyntaxKind.CloseBracketToken:
        if (comma >= 0 && commaCut >= 0) cuts[commaCut + 1] = comma + 1;
        else if (comma >= 0) cuts.push(comma, comma + 1);
        open.pop();
        break;
      case SyntaxKind.OpenBraceToken:
      case SyntaxKind.OpenBracketToken:
        if (open.length >= MAX_PLAIN_DEPTH) return undefined;
        open.push(kind === SyntaxKind.OpenBraceToken ? new Set() : null);
        break;
      case SyntaxKind.StringLiteral:
        if (expectKey) {
          // Decoded: "a" and "\u0061" are the same key.
          const key = scanner.getTokenValue();
          const keys = open[open.length - 1]!;
          // `__proto__` is named with its path: the reader below has it.
          if (key === "__proto__") return undefined;
          // Read on: a syntax error after it is named first.
          if (keys.has(key)) repeated ??= { repeated: key, offset };
          keys.add(key);
        }
    }
    comma = kind === SyntaxKind.CommaToken && afterValue ? offset : -1;
    commaCut = -1;
    expectKey = (kind === SyntaxKind.CommaToken ||
      kind === SyntaxKind.OpenBraceToken) && open[open.length - 1] != null;
    afterValue = kind !== SyntaxKind.CommaToken &&
      kind !== SyntaxKind.ColonToken && kind !== SyntaxKind.OpenBraceToken &&
      kind !== SyntaxKind.OpenBracketToken;
    kind = scanner.scan();
  }
  const pieces: string[] = [];
  let kept = 0;
  for (let i = 0; i < cuts.length; i += 2) {
    pieces.push(text.slice(kept, cuts[i]), " ");
    kept = cuts[i + 1]!;
  }
  pieces.push(text.slice(kept));
  try {
    const value = JSON.parse(pieces.join(""));
    return repeated ?? { value };
  } catch {
    return undefined;
  }
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
