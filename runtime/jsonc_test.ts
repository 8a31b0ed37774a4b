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

Deno.test("parseJsonc() reads a valid file in one pass over its text", () => {
  // `parse`, then `parseTree` for the repeated keys, each scanned the whole
  // text (and built it twice over, as values and as nodes): 16 MiB took
  // 8 s to read. The passes are counted as the characters the scanner
  // reads (`charCodeAt`); JSON.parse reads natively, uncounted.
  const entry = (i: number) =>
    `  "k${i}": { "a": [1, 2.5, true, null, "s\\n${i}",], // why\n  /* note */ "b": {}, },\n`;
  for (const n of [100, 400]) {
    const text = `{\n${
      Array.from({ length: n }, (_, i) => entry(i)).join("")
    }}`;
    let reads = 0;
    const { charCodeAt } = String.prototype;
    String.prototype.charCodeAt = function (this: string, index: number) {
      reads++;
      return charCodeAt.call(this, index);
    };
    let value: unknown;
    try {
      value = parseJsonc(text, "f");
    } finally {
      String.prototype.charCodeAt = charCodeAt;
    }
    assert.equal(Object.keys(value as object).length, n);
    assert.ok(
      reads <= 1.5 * text.length,
      `${reads} reads for ${text.length} characters`,
    );
  }
});

Deno.test("parseJsonc() reads a file with a syntax error twice, not three times", () => {
  // The one pass gives up at the error, then `parse` finds it; `parseTree`
  // is only needed for a repeated key, when `parse` found no error.
  const entry = (i: number) =>
    `  "k${i}": [1, "s${i}", { "b": {}, },], // why\n`;
  const text = `{\n${
    Array.from({ length: 400 }, (_, i) => entry(i)).join("")
  }]`;
  let reads = 0;
  const { charCodeAt } = String.prototype;
  String.prototype.charCodeAt = function (this: string, index: number) {
    reads++;
    return charCodeAt.call(this, index);
  };
  try {
    assert.throws(
      () => parseJsonc(text, "f"),
      /^ConfigError: f:402:1: Property name expected$/,
    );
  } finally {
    String.prototype.charCodeAt = charCodeAt;
  }
  assert.ok(
    reads <= 3 * text.length,
    `${reads} reads for ${text.length} characters`,
  );
});

Deno.test("parseJsonc() names a repeated key after one pass over the text", () => {
  // The one pass finds the key; `parse` and `parseTree` read the text
  // again only to find it once more.
  const entry = (i: number) =>
    `  "k${i}": [1, "s${i}", { "b": {}, },], // why\n`;
  const text = `{\n${
    Array.from({ length: 400 }, (_, i) => entry(i)).join("")
  }  "k7": 2,\n}`;
  let reads = 0;
  const { charCodeAt } = String.prototype;
  String.prototype.charCodeAt = function (this: string, index: number) {
    reads++;
    return charCodeAt.call(this, index);
  };
  try {
    assert.throws(
      () => parseJsonc(text, "f"),
      /^ConfigError: f:402:3: Duplicate key "k7"$/,
    );
  } finally {
    String.prototype.charCodeAt = charCodeAt;
  }
  assert.ok(
    reads <= 1.5 * text.length,
    `${reads} reads for ${text.length} characters`,
  );
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
