import assert from "node:assert/strict";
import { z } from "zod";
import { slowPattern, validateValue } from "./validator.ts";
import { callbacksDuring } from "../../tests/support/callbacks.ts";

function problems(schema: Record<string, unknown>, value: unknown): string {
  const r = validateValue(schema, value);
  assert.ok(!r.valid, "expected the value to be invalid");
  return r.message;
}

Deno.test("validateValue() names the field path of each problem", async (t) => {
  const schema = {
    type: "object",
    properties: {
      name: { type: "string", minLength: 2 },
      mode: { enum: ["fast", "safe"] },
      items: { type: "array", items: { type: "number", minimum: 3 } },
      "a/b": { type: "boolean" },
      either: { anyOf: [{ type: "string" }, { type: "number" }] },
      ref: { $ref: "#/$defs/n" },
    },
    required: ["name"],
    additionalProperties: false,
    $defs: { n: { type: "integer" } },
  };
  const cases: [string, unknown, string][] = [
    ["a missing field", {}, '"name" is required'],
    ["a wrong type", { name: 5 }, '"name" must be of type string, got number'],
    ["a short string", { name: "x" }, '"name" is too short (1 < 2)'],
    [
      "an enum",
      { name: "ok", mode: "slow" },
      '"mode" must be one of ["fast","safe"]',
    ],
    [
      "an array item",
      { name: "ok", items: [5, 1] },
      '"items.1" is less than 3',
    ],
    [
      "an escaped key",
      { name: "ok", "a/b": 1 },
      '"a/b" must be of type boolean, got number',
    ],
    ["an extra field", { name: "ok", extra: 1 }, '"extra" is not allowed'],
    [
      "a union",
      { name: "ok", either: true },
      '"either" does not match any of the allowed schemas',
    ],
    [
      "a $ref",
      { name: "ok", ref: 1.5 },
      '"ref" must be of type integer, got number',
    ],
    ["the root", [], "The value must be of type object, got array"],
  ];
  for (const [label, value, expected] of cases) {
    await t.step(label, () => assert.equal(problems(schema, value), expected));
  }
});

Deno.test("validateValue() never quotes the failing value", () => {
  const secret = "s3cr3t-value-123";
  const schema = {
    type: "object",
    properties: {
      token: { type: "string", pattern: "^ghp_", maxLength: 4, enum: ["x"] },
      pin: { type: "number", maximum: 10, multipleOf: 7 },
    },
  };
  const message = problems(schema, { token: secret, pin: 123456789 });
  assert.ok(!message.includes(secret), message);
  assert.ok(!message.includes("123456789"), message);
  assert.match(message, /"token"/);
  assert.match(message, /"pin" is greater than 10/);
});

Deno.test("validateValue() reads zod's JSON Schema and hand-written draft-07", () => {
  const zodSchema = z.toJSONSchema(
    z.object({ n: z.number().int(), tag: z.string().optional() }),
  ) as Record<string, unknown>;
  assert.ok(validateValue(zodSchema, { n: 1 }).valid);
  assert.equal(problems(zodSchema, { n: 1, x: 1 }), '"x" is not allowed');
  const draft7 = {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { a: { type: "string" } },
  };
  assert.equal(
    problems(draft7, { a: 1 }),
    '"a" must be of type string, got number',
  );
});

Deno.test("validateValue() follows the draft named by $schema", () => {
  // Draft 4 reads a boolean exclusiveMaximum; 2020-12 would reject it as a schema keyword value.
  const schema = {
    $schema: "http://json-schema.org/draft-04/schema#",
    type: "number",
    maximum: 5,
    exclusiveMaximum: true,
  };
  assert.ok(validateValue(schema, 4).valid);
  assert.equal(problems(schema, 5), "The value is greater than or equal to 5");
});

// A value going down ONE branch: `{x: {a: {a: ...}}}`, `depth` levels of `a`
// (never the same object under two keys: that value would have 2^depth paths).
function chain(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return { x: value };
}

// `L` applies itself twice to the same child: the work doubles each level.
function cyclicAllOf(): Record<string, unknown> {
  const branch = { properties: { a: { $ref: "#/$defs/L" } } };
  return {
    type: "object",
    properties: { x: { $ref: "#/$defs/L" } },
    $defs: { L: { allOf: [branch, structuredClone(branch)] } },
  };
}

// The same doubling without any cycle: D0 refers to D1 twice, D1 to D2, ...
function doublingDefs(count: number): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    const next = { $ref: `#/$defs/D${i + 1}` };
    defs[`D${i}`] = {
      allOf: [{ properties: { a: next } }, { properties: { a: { ...next } } }],
    };
  }
  defs[`D${count}`] = { type: "object" };
  return {
    type: "object",
    properties: { x: { $ref: "#/$defs/D0" } },
    $defs: defs,
  };
}

// Deep enough that the old, unbounded validator took about a second.
const DEEP = 18;

const REFUSED = "The value takes more than 200,000 schema steps to check";

Deno.test("validateValue() refuses a value that takes too many schema steps", async (t) => {
  await t.step("a self-referencing allOf", () => {
    assert.deepEqual(validateValue(cyclicAllOf(), chain(DEEP)), {
      valid: false,
      issues: [{
        path: "",
        problem: "takes more than 200,000 schema steps to check",
      }],
      message: REFUSED,
    });
  });
  await t.step("an acyclic chain of $defs", () => {
    assert.equal(
      problems(doublingDefs(DEEP), chain(DEEP)),
      REFUSED,
    );
  });
  await t.step("nodes under an unknown keyword, reached by $ref", () => {
    const branch = { properties: { a: { $ref: "#/hidden/L" } } };
    const schema = {
      properties: { x: { $ref: "#/hidden/L" } },
      hidden: { L: { allOf: [branch, structuredClone(branch)] } },
    };
    assert.equal(problems(schema, chain(DEEP)), REFUSED);
  });
  await t.step("a draft-07 dependency named like a keyword", () => {
    // `dereference` does not index `dependencies.enum` (it reads the map as
    // a schema and skips `enum`); validate() still applies it, and a $ref
    // in it resolves when written absolute.
    const ref = { $ref: "#/definitions/L" };
    const back = "https://github.com/cfworker#/definitions/L";
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      properties: { x: ref },
      definitions: {
        L: {
          dependencies: {
            enum: {
              allOf: [
                { properties: { a: { $ref: back } } },
                { properties: { a: { $ref: back } } },
              ],
            },
          },
        },
      },
    };
    let value: Record<string, unknown> = {};
    for (let i = 0; i < DEEP; i++) value = { enum: 1, a: value };
    assert.equal(problems(schema, { x: value }), REFUSED);
  });
  await t.step("subschemas under a keyword map written as a list", () => {
    // `dereference` skips a list where it expects a map, so nothing below
    // it is indexed; validate() still applies its entries (by index), and
    // their lists and subschemas, to the value's items.
    const schema = { properties: [{ allOf: [{ items: { type: "number" } }] }] };
    const value = { 0: new Array(200_000).fill(1) };
    assert.equal(problems(schema, value), REFUSED);
  });
  await t.step("the same schemas still check a shallow value", () => {
    assert.ok(validateValue(cyclicAllOf(), chain(8)).valid);
    assert.ok(validateValue(doublingDefs(DEEP), chain(8)).valid);
  });
});

Deno.test("validateValue() charges uniqueItems by the pairs it compares", async (t) => {
  // cfworker compares every ordered pair of an array's items: 20,000
  // distinct numbers took about 340 ms on the host's thread, objects far
  // more (about 35 ns a node of an item, a pair).
  const unique = { type: "array", uniqueItems: true };
  await t.step("a long array of distinct objects is refused", () => {
    const rows = Array.from({ length: 5_000 }, (_, id) => ({ id }));
    assert.equal(problems(unique, rows), REFUSED);
  });
  await t.step("a long array of distinct numbers is refused", () => {
    const numbers = Array.from({ length: 20_000 }, (_, i) => i);
    assert.equal(problems(unique, numbers), REFUSED);
  });
  await t.step("so is one nested under a uniqueItems schema's child", () => {
    const schema = {
      type: "object",
      properties: { ids: { type: "array", uniqueItems: true } },
    };
    const ids = Array.from({ length: 20_000 }, (_, i) => i);
    assert.equal(problems(schema, { ids }), REFUSED);
  });
  await t.step("shorter arrays are still checked, duplicates found", () => {
    const numbers = Array.from({ length: 5_000 }, (_, i) => i);
    assert.ok(validateValue(unique, numbers).valid);
    const rows = Array.from({ length: 500 }, (_, id) => ({ id }));
    assert.ok(validateValue(unique, rows).valid);
    assert.equal(
      problems(unique, [...rows, { id: 3 }]),
      "The value duplicate items at indexes 3 and 500",
    );
  });
  await t.step("a schema without uniqueItems charges nothing for pairs", () => {
    const rows = Array.from({ length: 20_000 }, (_, id) => ({ id }));
    assert.ok(validateValue({ type: "array" }, rows).valid);
  });
});

Deno.test("validateValue() refuses a value nested past the stack", () => {
  let value: unknown = 1;
  for (let i = 0; i < 20_000; i++) value = [value];
  assert.equal(
    problems({ items: { $ref: "#" } }, value),
    "The value nests too deep to check",
  );
  assert.equal(
    problems({ type: "array", uniqueItems: true }, value),
    "The value nests too deep to check",
  );
});

Deno.test("validateValue() still checks large legitimate values", async (t) => {
  await t.step("a deep binary tree schema down one branch", () => {
    const tree = {
      $defs: {
        node: {
          type: "object",
          properties: {
            value: { type: "number" },
            left: { $ref: "#/$defs/node" },
            right: { $ref: "#/$defs/node" },
          },
          required: ["value"],
        },
      },
      $ref: "#/$defs/node",
    };
    let value: Record<string, unknown> = { value: 0 };
    // Not much deeper: cfworker's recursion overflows the stack at a few
    // hundred levels, sooner once the JIT has dropped its optimized code.
    for (let i = 1; i < 100; i++) {
      value = i % 2 ? { value: i, left: value } : { value: i, right: value };
    }
    assert.ok(validateValue(tree, value).valid);
    (value.left as Record<string, unknown>).value = "x";
    assert.equal(
      problems(tree, value),
      '"left.value" must be of type number, got string',
    );
  });
  await t.step("the JSON-value anyOf schema", () => {
    const json = {
      $defs: {
        json: {
          anyOf: [
            { type: ["null", "boolean", "number", "string"] },
            { type: "array", items: { $ref: "#/$defs/json" } },
            {
              type: "object",
              additionalProperties: { $ref: "#/$defs/json" },
            },
          ],
        },
      },
      $ref: "#/$defs/json",
    };
    let value: unknown = [1, "a", null, { b: true }];
    for (let i = 0; i < 150; i++) value = { [`k${i}`]: value, n: i };
    assert.ok(validateValue(json, value).valid);
  });
  await t.step("an array of 20,000 objects", () => {
    const rows = {
      type: "array",
      items: {
        type: "object",
        properties: { id: { type: "integer" }, name: { type: "string" } },
        required: ["id", "name"],
      },
    };
    const value = Array.from({ length: 20_000 }, (_, id) => ({
      id,
      name: `row ${id}`,
    }));
    assert.ok(validateValue(rows, value).valid);
  });
});

Deno.test("compiling leaves the schema object as it was", () => {
  const schema = cyclicAllOf();
  const before = JSON.stringify(schema);
  const copy = structuredClone(schema);
  const names = (o: object | undefined) => Object.getOwnPropertyNames(o ?? {});
  const defs = schema.$defs as { L: { allOf: object[] } };
  const namesBefore = [schema, defs.L, defs.L.allOf[0]].map(names);
  assert.ok(validateValue(schema, chain(3)).valid);
  assert.equal(JSON.stringify(schema), before);
  assert.deepEqual(schema, copy);
  assert.deepEqual([schema, defs.L, defs.L.allOf[0]].map(names), namesBefore);
});

Deno.test("an instance key named like the counted keyword checks as before", async (t) => {
  await t.step("properties, required and additionalProperties", () => {
    const schema = {
      type: "object",
      properties: { $ref: { type: "string" } },
      required: ["$ref"],
      additionalProperties: false,
    };
    assert.ok(validateValue(schema, { $ref: "a" }).valid);
    assert.equal(
      problems(schema, { $ref: 1 }),
      '"$ref" must be of type string, got number',
    );
    assert.equal(problems(schema, {}), '"$ref" is required');
    assert.equal(
      problems({ type: "object", additionalProperties: false }, { $ref: 1 }),
      '"$ref" is not allowed',
    );
  });
  await t.step("draft-07 dependencies keyed by it", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      dependencies: { $ref: ["b"], c: { required: ["$ref"] } },
    };
    assert.ok(validateValue(schema, { a: 1 }).valid);
    assert.ok(validateValue(schema, { $ref: 1, b: 2 }).valid);
    assert.ok(!validateValue(schema, { $ref: 1 }).valid);
    assert.ok(!validateValue(schema, { c: 1 }).valid);
    assert.ok(validateValue(schema, { c: 1, $ref: 1, b: 1 }).valid);
  });
  await t.step("a $ref to the dependencies map itself", () => {
    const schema = {
      dependencies: { c: ["b"] },
      properties: { inner: { $ref: "#/dependencies" } },
    };
    assert.ok(validateValue(schema, { c: 1, b: 1, inner: { $ref: 1 } }).valid);
    assert.ok(!validateValue(schema, { c: 1, inner: { $ref: 1 } }).valid);
  });
});

Deno.test("each validation counts its own steps", () => {
  const numbers = { type: "array", items: { type: "number" } };
  const many = (n: number) => new Array(n).fill(1);
  // A refused validation leaves no count behind.
  assert.ok(!validateValue(numbers, many(250_000)).valid);
  assert.ok(validateValue(numbers, many(150_000)).valid);
  // One run inside another (here from a getter of the value) counts apart,
  // and the outer one goes on from its own count.
  const outer = many(100_000);
  let inner: boolean | undefined;
  Object.defineProperty(outer, 50_000, {
    get: () => {
      inner = validateValue(numbers, many(150_000)).valid;
      return 1;
    },
  });
  assert.ok(validateValue(numbers, outer).valid);
  assert.equal(inner, true);
});

Deno.test("a schema listing hundreds of thousands of subschemas still compiles", () => {
  // Only the items a value has are checked: a few steps.
  const prefixItems = Array.from({ length: 300_000 }, (_, i) => ({ const: i }));
  assert.ok(validateValue({ prefixItems }, [0, 1]).valid);
  assert.equal(
    problems({ prefixItems }, [1]),
    '"0" must be 0',
  );
});

Deno.test("patterns are matched in linear time, as JavaScript matches them", async (t) => {
  await t.step("what JavaScript accepts and refuses, RE2 does too", () => {
    const cases: [string, string[]][] = [
      ["^[a-z0-9_-]{3,16}$", ["abc", "a", "ab_c-9", "ABC", "a b c", ""]],
      ["^\\d{4}-\\d{2}-\\d{2}$", ["2026-11-28", "26-11-28", "2026-1-28x"]],
      ["b", ["abc", "xyz"]],
      ["^\\p{L}+$", ["héllo", "h3llo", "日本"]],
      ["^.$", ["😀", "ab", "\n"]],
      ["^(a|b)*c$", ["ababc", "abd"]],
      ["^\\S+@\\S+$", ["a@b", "a @b", "a\u00a0@b"]],
      ["^[\\u0020-\\u007e]*$", ["ok ~", "é", ""]],
      ["^\\u{1F600}\\s\\u0041$", ["😀\u2028A", "😀 B"]],
      ["^[\\s\\d]+$", ["1\u00a02", "1x"]],
      ["^a.b$", ["a-b", "a\rb", "a\u2028b", "a\nb"]],
      ["^[^]$", ["\n", "ab"]],
      ["^[\\b]\\cJ$", ["\b\n", "b\n"]],
      ["^a$", ["a", "a\n"]],
    ];
    for (const [pattern, values] of cases) {
      for (const value of values) {
        const native = new RegExp(pattern, "u").test(value);
        const r = validateValue({ type: "string", pattern }, value);
        assert.equal(r.valid, native, `${pattern} on ${JSON.stringify(value)}`);
      }
    }
  });

  await t.step("a backtracking pattern refuses a long value", () => {
    // JavaScript's engine takes 2^n steps here: hours at this length.
    const schema = {
      type: "object",
      properties: { s: { type: "string", pattern: "^(a+)+$" } },
      patternProperties: { "^(b+)+$": { type: "number" } },
    };
    const r = validateValue(schema, { s: "a".repeat(5_000) + "!" });
    assert.ok(!r.valid);
    assert.equal(r.message, '"s" does not match pattern');
    const key = "b".repeat(5_000) + "!";
    assert.ok(validateValue(schema, { [key]: "not a number" }).valid);
    assert.ok(!validateValue(schema, { bb: "not a number" }).valid);
  });

  await t.step(
    "the global RegExp is JavaScript's again after each validation",
    () => {
      const native = globalThis.RegExp;
      validateValue({ type: "string", pattern: "^a$" }, "a");
      assert.equal(globalThis.RegExp, native);
      const deep = { type: "array", items: { $ref: "#" }, pattern: "x" };
      let value: unknown = [];
      for (let i = 0; i < 10_000; i++) value = [value];
      assert.ok(!validateValue(deep, value).valid); // thrown inside, caught
      assert.equal(globalThis.RegExp, native);
    },
  );

  await t.step("format: regex still checks a value is a pattern", () => {
    const schema = { type: "string", format: "regex", pattern: "^[(a-z]+$" };
    assert.ok(validateValue(schema, "(ab").valid === false);
    assert.ok(validateValue(schema, "ab").valid);
  });

  await t.step("lookaround and backreferences are refused", () => {
    for (const pattern of ["^(?=a)b", "(?<!a)b", "(a)\\1"]) {
      const schema = { properties: { s: { type: "string", pattern } } };
      assert.match(
        slowPattern(schema) ?? "",
        /cannot be matched in linear time/,
      );
      assert.throws(
        () => validateValue(schema, { s: "a" }),
        /Cannot compile schema: pattern/,
      );
    }
    assert.equal(slowPattern({ patternProperties: { "^x_": {} } }), null);
    // zod's z.hostname(): a format the validator checks, and a lookahead.
    const host = {
      type: "string",
      format: "hostname",
      pattern: "^(?=.{1,9}$)[a-z.]+$",
    };
    assert.equal(slowPattern(host), null);
    assert.ok(validateValue(host, "example.com").valid); // 11 > 9: unchecked
    assert.ok(!validateValue(host, "not a host!").valid);
    const zod = z.toJSONSchema(
      z.object({ h: z.hostname(), d: z.iso.duration() }),
    );
    assert.equal(slowPattern(zod as Record<string, unknown>), null);
    assert.ok(
      validateValue(zod as Record<string, unknown>, { h: "a.b", d: "P1D" })
        .valid,
    );
    assert.ok(
      !validateValue(zod as Record<string, unknown>, { h: "a b", d: "P1D" })
        .valid,
    );
    const unknown = { type: "string", format: "emoji", pattern: "^(?=x)" };
    assert.match(slowPattern(unknown) ?? "", /linear time/);
    assert.match(
      slowPattern({ $defs: { k: { patternProperties: { "(?=x)": {} } } } }) ??
        "",
      /"\(\?=x\)"/,
    );
  });
});

Deno.test("validateValue() describes n failed unions in work linear in n", () => {
  // A client's arguments: 40,000 items each failing a union took 120,000
  // steps, within the bound then; describing their errors pairwise took
  // minutes of the host's thread. (Gathering errors now counts against the
  // bound: about 2,000 such items are the most it describes in full.)
  const schema = {
    type: "array",
    items: { anyOf: [{ type: "string" }, { type: "number" }] },
  };
  let result = validateValue(schema, []);
  const work = (n: number) =>
    callbacksDuring(() => {
      result = validateValue(schema, new Array(n).fill(true));
    });
  const small = work(250);
  const large = work(1_000);
  assert.ok(!result.valid);
  assert.equal(result.issues.length, 1_000);
  assert.deepEqual(result.issues[7], {
    path: "7",
    problem: "does not match any of the allowed schemas",
  });
  // Four times the items: four times the work, not sixteen.
  assert.ok(large < 5 * small, `${small} then ${large} callbacks`);
});

Deno.test("validateValue() shows a key's control characters escaped in its message", () => {
  const schema = {
    type: "object",
    properties: {},
    additionalProperties: false,
  };
  const result = validateValue(schema, { "\x1b[2J\r\nfake: line\u2028": 1 });
  assert.ok(!result.valid);
  // The issue keeps the key as it is; the one-line message (logged, shown
  // in a terminal) gets no escape sequence or line break from a client.
  assert.equal(result.issues[0]?.path, "\x1b[2J\r\nfake: line\u2028");
  assert.equal(
    result.message,
    '"\\u001b[2J\\u000d\\u000afake: line\\u2028" is not allowed',
  );
});

Deno.test("validateValue() escapes a key's bidi overrides in its message", () => {
  // U+202E reverses what follows on screen: a key could make the line
  // read as another, as in the host's other log lines.
  const schema = { type: "object", additionalProperties: false };
  const result = validateValue(schema, { "a\u202egpj.exe\u2066": 1 });
  assert.equal(
    result.valid ? "" : result.message,
    '"a\\u202egpj.exe\\u2066" is not allowed',
  );
});

Deno.test("validateValue() names the first 20 issues in its message and counts the rest", () => {
  // The message goes back to the client and into the run history: 60,000
  // failing items made one of several megabytes from a 300 KB value. (That
  // many are no longer all gathered: 5,000 are.)
  const schema = { type: "array", items: { type: "number" } };
  const result = validateValue(schema, new Array(5_000).fill(true));
  assert.ok(!result.valid);
  assert.equal(result.issues.length, 5_000);
  const first = Array.from(
    { length: 20 },
    (_, i) => `"${i}" must be of type number, got boolean`,
  );
  assert.equal(result.message, `${first.join("; ")}; and 4,980 more`);
  const few = validateValue(schema, new Array(20).fill(true));
  assert.equal(few.valid ? "" : few.message, first.join("; "));
});

Deno.test("validateValue() describes failures n levels deep in work linear in n", () => {
  // Each error's schema location grows with the value's depth under a
  // recursive schema, and each of its ancestors was hashed whole: 20,000
  // items ten arrays deep held the host's thread for 15 s, a hundred deep
  // for minutes. Counted here: the characters of the strings looked up in
  // a Set or Map while the failures are described.
  const schema = {
    $ref: "#/$defs/n",
    $defs: {
      n: {
        anyOf: [{ type: "number" }, {
          type: "array",
          items: { $ref: "#/$defs/n" },
        }],
      },
    },
  };
  const methods = [
    [Set.prototype, "has"],
    [Set.prototype, "add"],
    [Map.prototype, "has"],
    [Map.prototype, "get"],
    [Map.prototype, "set"],
  ] as const;
  const originals = methods.map(([proto, name]) =>
    Object.getOwnPropertyDescriptor(proto, name)!
  );
  let hashed = 0;
  const work = (depth: number) => {
    // (200 items: gathering more failures this deep is past the bound.)
    let value: unknown = new Array(200).fill(true);
    for (let i = 0; i < depth; i++) value = [value];
    hashed = 0;
    const result = validateValue(schema, value);
    assert.equal(
      result.valid ? "" : result.message,
      "The value does not match any of the allowed schemas",
    );
    return hashed;
  };
  for (const [i, [proto, name]] of methods.entries()) {
    const original = originals[i]!.value;
    Object.defineProperty(proto, name, {
      ...originals[i],
      value(this: unknown, key: unknown, ...rest: unknown[]) {
        if (typeof key === "string") hashed += key.length;
        return original.call(this, key, ...rest);
      },
    });
  }
  let shallow, deep;
  try {
    shallow = work(10);
    deep = work(40);
  } finally {
    methods.forEach(([proto, name], i) =>
      Object.defineProperty(proto, name, originals[i]!)
    );
  }
  // Four times as deep: four times the work or so, not sixteen.
  assert.ok(deep < 8 * shallow, `${shallow} then ${deep} characters`);
});
