import assert from "node:assert/strict";
import { parseJsonc } from "./jsonc.ts";
import { ConfigError } from "./config_error.ts";
import { parse } from "jsonc-parser";

Deno.test("parseJsonc() reads comments and trailing commas", () => {
  assert.deepEqual(
    parseJsonc('/* a */ { "x": [1, 2,], // b\n "y": null, }', "f"),
    { x: [1, 2], y: null },
  );
  assert.throws(
    () => parseJsonc("", "f"),
    /^ConfigError: f:1:1: Value expected$/,
  );
});

Deno.test("parseJsonc() names file, line and column of the first error in a sentence", () => {
  assert.throws(
    () => parseJsonc('{\n\n   "a": 1\n   "b": 2 }', "dir/x.jsonc"),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message === "dir/x.jsonc:4:4: Comma expected",
  );
  assert.throws(
    () => parseJsonc('{ "a": "unterminated', "y.jsonc"),
    (e: unknown) =>
      e instanceof ConfigError &&
      /^y\.jsonc:1:\d+: [A-Z][a-z ]+$/.test(e.message),
  );
});

// The characters the parser reads (`charCodeAt`) while `run` runs.
function readsDuring(run: () => void): number {
  let reads = 0;
  const { charCodeAt } = String.prototype;
  String.prototype.charCodeAt = function (this: string, index: number) {
    reads++;
    return charCodeAt.call(this, index);
  };
  try {
    run();
  } finally {
    String.prototype.charCodeAt = charCodeAt;
  }
  return reads;
}

Deno.test("parseJsonc() reads the text once, valid or not", () => {
  // `parse`, then `parseTree` for the repeated keys, each read the whole
  // text and built it again (as values, then as nodes): 16 MiB took 4 s
  // and more. One `parseTree` now gives both.
  const entry = (i: number) =>
    `  "k${i}": { "a": [1, 2.5, true, null, "s\\n${i}",], // why\n  /* note */ "b": {}, },\n`;
  const body = Array.from({ length: 400 }, (_, i) => entry(i)).join("");
  for (const n of [100, 400]) {
    const text = `{\n${body.split("\n").slice(0, 2 * n).join("\n")}\n}`;
    let value: unknown;
    const reads = readsDuring(() => value = parseJsonc(text, "f"));
    assert.equal(Object.keys(value as object).length, n);
    assert.ok(reads <= 1.5 * text.length, `${reads} reads of ${text.length}`);
  }
  const cases: [string, RegExp][] = [
    [`{\n${body}]`, /^ConfigError: f:802:1: Property name expected$/],
    [`{\n${body}  "k7": 2,\n}`, /^ConfigError: f:802:3: Duplicate key "k7"$/],
  ];
  for (const [text, error] of cases) {
    const reads = readsDuring(() =>
      assert.throws(() => parseJsonc(text, "f"), error)
    );
    assert.ok(reads <= 1.5 * text.length, `${reads} reads of ${text.length}`);
  }
});

Deno.test("parseJsonc() reads what jsonc-parser reads, and fails where it fails", () => {
  const same = [
    '{ "a": 1, // last\n }',
    '{ "a": [1, /* x */ ], /* y */ "b": { "c": [], }, }',
    '[1, "two", true, false, null, {}, [], -0.5e3, "\\u00e9\\"",]',
    '"just a string"',
    "  7 // a number\n",
    '{ "a": "//not a comment", "b": "/* nor this */" }',
    '{ "a": { "x": 1 }, "b": { "x": 2 } }',
  ];
  for (const text of same) {
    assert.deepEqual(
      parseJsonc(text, "f"),
      parse(text, [], { allowTrailingComma: true }),
      text,
    );
  }
  const errors: [string, RegExp][] = [
    ["[1/**/2]", /^ConfigError: f:1:7: Comma expected$/],
    ["{,}", /^ConfigError: f:1:2: /],
    ["[1,,]", /^ConfigError: f:1:4: Value expected$/],
    ['{ "a",}', /^ConfigError: f:1:6: /],
    ["[1,] ,", /^ConfigError: f:1:6: /],
    ['{ "a": 1, "\\u0061": 2 }', /^ConfigError: f:1:11: Duplicate key "a"$/],
    [
      '{ "x": [{ "y": { "__proto__": {} } }] }',
      /^ConfigError: f:1:18: x\.0\.y\.__proto__: a key named "__proto__"/,
    ],
    ['{ "a": "\u0001" }', /^ConfigError: f:1:8: Invalid character$/],
  ];
  for (const [text, error] of errors) {
    assert.throws(() => parseJsonc(text, "f"), error, text);
  }
});

Deno.test("parseJsonc() names the first repeated key of the text", () => {
  assert.throws(
    () =>
      parseJsonc('{ "x": { "d": 1, "d": 2 }, "y": { "e": 1, "e": 2 } }', "f"),
    /^ConfigError: f:1:18: Duplicate key "d"$/,
  );
});
