import assert from "node:assert/strict";
import { z } from "zod";
import type { ToolParameter } from "./tool.ts";
import { ConversionBudget, schemaToParameters } from "./parameters.ts";

/** Asserts every field of every parameter (recursively) has its A2E type. */
function assertComplete(params: ToolParameter[]): void {
  for (const p of params) {
    assert.deepEqual(Object.keys(p).sort(), [
      "description",
      "enum",
      "name",
      "properties",
      "required",
      "type",
    ]);
    assert.equal(typeof p.name, "string");
    assert.equal(typeof p.type, "string");
    assert.equal(typeof p.description, "string", `${p.name}.description`);
    assert.equal(typeof p.required, "boolean");
    assert.ok(
      p.enum === null ||
        (Array.isArray(p.enum) && p.enum.every((v) => typeof v === "string")),
    );
    assert.ok(p.properties === null || typeof p.properties === "object");
    if (p.properties) assertComplete(Object.values(p.properties));
  }
}

function byName(params: ToolParameter[]): Record<string, ToolParameter> {
  return Object.fromEntries(params.map((p) => [p.name, p]));
}

Deno.test("schemaToParameters() converts a zod v4 schema with every field present", () => {
  const Node: z.ZodType = z.object({
    label: z.string(),
    get children() {
      return z.array(Node);
    },
  });
  const schema = z.toJSONSchema(z.object({
    path: z.string().describe("File to read"),
    mode: z.enum(["text", "bytes"]).optional(),
    limit: z.number().int().nullable(),
    id: z.union([z.string(), z.number()]),
    kind: z.literal("plain"),
    encoding: z.string().default("utf-8"),
    tree: Node,
    headers: z.record(z.string(), z.number()),
    files: z.array(z.string()).describe("List of file paths"),
    options: z.object({ recursive: z.boolean().describe("Recurse") })
      .optional().describe("Options"),
  }));
  const params = schemaToParameters(schema);
  assertComplete(params);
  const p = byName(params);

  assert.deepEqual(params.map((x) => x.name), [
    "path",
    "mode",
    "limit",
    "id",
    "kind",
    "encoding",
    "tree",
    "headers",
    "files",
    "options",
  ]);
  assert.equal(p.path?.description, "File to read");
  assert.equal(p.path?.required, true);
  assert.deepEqual(p.mode?.enum, ["text", "bytes"]);
  assert.equal(p.mode?.required, false);
  assert.equal(p.mode?.description, "");
  assert.equal(p.limit?.type, "integer");
  assert.equal(p.id?.type, "string");
  assert.equal(p.id?.description, "string or number");
  assert.deepEqual(p.kind?.enum, ["plain"]);
  assert.equal(p.tree?.type, "object");
  assert.equal(p.tree?.properties?.label?.type, "string");
  // The recursive reference stops instead of looping.
  assert.equal(p.tree?.properties?.children?.type, "array");
  assert.equal(p.tree?.properties?.children?.description, "array of object");
  assert.equal(p.tree?.properties?.children?.properties, null);
  assert.equal(p.headers?.type, "object");
  assert.equal(p.headers?.description, "map of number");
  assert.equal(p.headers?.properties, null);
  assert.equal(p.files?.description, "List of file paths (array of string)");
  assert.equal(p.options?.description, "Options");
  assert.equal(p.options?.required, false);
  assert.deepEqual(p.options?.properties?.recursive, {
    name: "recursive",
    type: "boolean",
    description: "Recurse",
    required: true,
    enum: null,
    properties: null,
  });
});

Deno.test("schemaToParameters() resolves $ref into $defs and definitions", () => {
  const params = schemaToParameters({
    type: "object",
    properties: {
      from: { $ref: "#/$defs/Point", description: "Start" },
      to: { $ref: "#/definitions/Point" },
    },
    required: ["to"],
    $defs: {
      Point: {
        type: "object",
        description: "A point",
        properties: { x: { type: "number" }, y: { type: "number" } },
        required: ["x"],
      },
    },
    definitions: {
      Point: { $ref: "#/$defs/Point" },
    },
  });
  assertComplete(params);
  const p = byName(params);
  assert.equal(p.from?.description, "Start");
  assert.equal(p.from?.required, false);
  assert.equal(p.to?.description, "A point");
  assert.equal(p.to?.required, true);
  assert.equal(p.to?.properties?.x?.required, true);
  assert.equal(p.to?.properties?.y?.required, false);
});

Deno.test("schemaToParameters() reads a hostile $ref's escapes as the validator does", () => {
  // An imported tool's schema is untrusted: a malformed percent escape used
  // to throw (URIError) and cost the tool its whole parameter list.
  const params = schemaToParameters({
    type: "object",
    properties: {
      bad: { $ref: "#/$defs/%zz" },
      escaped: { $ref: "#/$defs/100%25" },
      proto: { $ref: "#/__proto__" },
    },
    $defs: { "%zz": { type: "boolean" }, "100%": { type: "integer" } },
  });
  const p = byName(params);
  assert.equal(p.bad?.type, "boolean");
  assert.equal(p.escaped?.type, "integer");
  assert.equal(p.proto?.type, "any", "only the document's own keys resolve");
});

Deno.test("schemaToParameters() refuses a schema whose references fan out", async (t) => {
  // An imported tool's schema is untrusted, and its parameters are derived
  // on the host's thread. Each level refers to the next one twice, so a
  // 2 KB schema twenty levels deep stands for 2^20 parameters (or union
  // branches): walking them all held the thread for seconds, for ever at
  // forty levels.
  function fanOut(levels: number, twice: (next: object) => object) {
    const defs: Record<string, object> = {};
    for (let i = 0; i < levels; i++) {
      defs[`d${i}`] = twice({ $ref: `#/$defs/d${i + 1}` });
    }
    defs[`d${levels}`] = { type: "object", properties: { z: {} } };
    return {
      type: "object",
      properties: { root: { $ref: "#/$defs/d0" } },
      $defs: defs,
    };
  }
  await t.step("two properties referring to the next level", () => {
    const schema = fanOut(20, (next) => ({
      type: "object",
      properties: { a: next, b: next },
    }));
    assert.throws(
      () => schemaToParameters(schema),
      (error: unknown) =>
        error instanceof RangeError &&
        error.message ===
          "Cannot convert schema to parameters: it takes more than 10,000 steps",
    );
  });
  await t.step("a union of two references to the next level", () => {
    const schema = fanOut(20, (next) => ({ anyOf: [next, { ...next }] }));
    assert.throws(() => schemaToParameters(schema), RangeError);
  });
  await t.step("a wide schema within the bound converts", () => {
    const properties = Object.fromEntries(
      Array.from({ length: 2000 }, (_, i) => [`p${i}`, { type: "string" }]),
    );
    assert.equal(
      schemaToParameters({ type: "object", properties }).length,
      2000,
    );
  });
});

Deno.test("schemaToParameters() maps unions and nullable types", async (t) => {
  await t.step("a nullable type array keeps the non-null type", () => {
    const [p] = schemaToParameters({
      type: "object",
      properties: { n: { type: ["null", "integer"] } },
    });
    assert.equal(p?.type, "integer");
    assert.equal(p?.description, "");
  });
  await t.step("a union of object shapes merges their properties", () => {
    const [p] = schemaToParameters({
      type: "object",
      properties: {
        target: {
          oneOf: [
            {
              type: "object",
              properties: {
                path: { type: "string" },
                mode: { type: "string" },
              },
              required: ["path", "mode"],
            },
            {
              type: "object",
              properties: { url: { type: "string" }, mode: { type: "string" } },
              required: ["url", "mode"],
            },
          ],
        },
      },
    });
    assert.equal(p?.type, "object");
    assert.deepEqual(Object.keys(p?.properties ?? {}), ["path", "mode", "url"]);
    assert.equal(p?.properties?.mode?.required, true);
    assert.equal(p?.properties?.path?.required, false);
  });
  await t.step("a union of literals becomes one enum of strings", () => {
    const [p] = schemaToParameters({
      type: "object",
      properties: {
        level: { anyOf: [{ const: 1 }, { const: 2 }, { enum: [3, true] }] },
      },
    });
    assert.equal(p?.type, "integer");
    assert.deepEqual(p?.enum, ["1", "2", "3", "true"]);
  });
  await t.step("allOf merges its members", () => {
    const [p] = schemaToParameters({
      type: "object",
      properties: {
        box: {
          allOf: [
            { type: "object", properties: { w: { type: "number" } } },
            { properties: { h: { type: "number" } }, required: ["h"] },
          ],
        },
      },
    });
    assert.deepEqual(Object.keys(p?.properties ?? {}), ["w", "h"]);
    assert.equal(p?.properties?.h?.required, true);
  });
});

Deno.test("schemaToParameters() describes arrays with their item type", async (t) => {
  await t.step("arrays of objects expose the item properties", () => {
    const [p] = schemaToParameters({
      type: "object",
      properties: {
        rows: {
          type: "array",
          description: "Rows to insert",
          items: {
            type: "object",
            properties: { id: { type: "integer" } },
            required: ["id"],
          },
        },
      },
    });
    assert.equal(p?.description, "Rows to insert (array of object)");
    assert.equal(p?.properties?.id?.required, true);
  });
  await t.step("arrays of enums expose the item enum", () => {
    const [p] = schemaToParameters({
      type: "object",
      properties: {
        days: { type: "array", items: { enum: ["mon", "tue"] } },
      },
    });
    assert.equal(p?.description, "array of string");
    assert.deepEqual(p?.enum, ["mon", "tue"]);
  });
  await t.step("nested arrays name every level", () => {
    const [p] = schemaToParameters({
      type: "object",
      properties: {
        matrix: {
          type: "array",
          items: { type: "array", items: { type: "number" } },
        },
      },
    });
    assert.equal(p?.description, "array of array of number");
  });
  await t.step("an array without items says so", () => {
    const [p] = schemaToParameters({
      type: "object",
      properties: { any: { type: "array" } },
    });
    assert.equal(p?.description, "array of any");
  });
});

Deno.test("schemaToParameters() handles roots that are not objects", async (t) => {
  await t.step("empty schemas give no parameters", () => {
    assert.deepEqual(schemaToParameters(undefined), []);
    assert.deepEqual(schemaToParameters(true), []);
    assert.deepEqual(schemaToParameters({}), []);
    assert.deepEqual(schemaToParameters({ type: "object" }), []);
    assert.deepEqual(
      schemaToParameters({
        $schema: "https://json-schema.org/draft/2020-12/schema",
      }),
      [],
    );
  });
  await t.step("a scalar root becomes one named parameter", () => {
    const params = schemaToParameters(
      { type: "string", description: "The page text" },
      { rootName: "text" },
    );
    assertComplete(params);
    assert.deepEqual(params, [{
      name: "text",
      type: "string",
      description: "The page text",
      required: true,
      enum: null,
      properties: null,
    }]);
  });
  await t.step("a root $ref to an object is followed", () => {
    const params = schemaToParameters({
      $ref: "#/$defs/Args",
      $defs: {
        Args: { type: "object", properties: { q: { type: "string" } } },
      },
    });
    assert.deepEqual(params.map((p) => p.name), ["q"]);
  });
  await t.step("a non-object schema is a caller mistake", () => {
    assert.throws(() => schemaToParameters("string"), TypeError);
    assert.throws(() => schemaToParameters([]), TypeError);
  });
});

Deno.test("schemaToParameters() folds a wide anyOf or allOf one step per variant", async (t) => {
  // An imported MCP server's or a module's schema is converted on the
  // host's one thread. Folding each variant used to copy everything folded
  // so far: 2,000 object variants of 10 properties (355 KB) held the
  // thread for 2 minutes, 4,000 enums of 10 values (273 KB) for 5 s.
  const range = <T>(n: number, f: (i: number) => T) =>
    Array.from({ length: n }, (_, i) => f(i));
  const objects = (n: number) =>
    range(n, (i) => ({
      type: "object",
      properties: Object.fromEntries(range(10, (j) => [`p${i}_${j}`, true])),
      required: range(10, (j) => `p0_${j}`),
    }));
  const enums = (n: number) =>
    range(n, (i) => ({ enum: range(10, (j) => i * 10 + j) }));
  const types = (n: number) => range(n, (i) => ({ type: `t${i}` }));
  // The steps a conversion takes, read off a budget it cannot spend.
  const convert = (wide: Record<string, unknown>) => {
    const budget = new ConversionBudget({ steps: 1e9, enumValues: 1e9 });
    const schema = { type: "object", properties: { a: wide } };
    try {
      const [a] = schemaToParameters(schema, { budget });
      return {
        steps: budget.steps,
        count: a!.enum?.length ?? a!.description.split(" or ").length,
      };
    } catch (error) {
      return { steps: budget.steps, count: (error as Error).name };
    }
  };
  await t.step("30,000 properties are more parameters than one makes", () => {
    assert.equal(convert({ anyOf: objects(3000) }).count, "RangeError");
    assert.equal(convert({ allOf: objects(3000) }).count, "RangeError");
  });
  await t.step("9,000 enums or types fold whole, a step each", () => {
    for (const [variants, count] of [[enums, 90_000], [types, 9000]] as const) {
      const half = convert({ anyOf: variants(4500) });
      const whole = convert({ anyOf: variants(9000) });
      assert.equal(whole.count, count);
      assert.equal(whole.steps - half.steps, 4500);
    }
  });
  await t.step("an allOf of object variants takes a step each", () => {
    const few = convert({ allOf: objects(10) });
    const more = convert({ allOf: objects(20) });
    // The variants, then a parameter for each of their properties.
    assert.equal(more.steps - few.steps, 10 + 100);
  });
});

Deno.test("schemaToParameters() refuses a schema whose enum references multiply", () => {
  // One 20,000-value enum referenced by 100 properties (120 KB) made 2
  // million enum strings; 200 references to 100,000 values (594 KB) held
  // the host's thread 18 s and 774 MB, and a few more aborted it.
  const schema = {
    type: "object",
    $defs: { e: { enum: Array.from({ length: 20_000 }, (_, i) => i) } },
    properties: Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`p${i}`, { $ref: "#/$defs/e" }]),
    ),
  };
  assert.throws(
    () => schemaToParameters(schema),
    (error: unknown) =>
      error instanceof RangeError &&
      /more than 100,000 enum values/.test(error.message),
  );
});
