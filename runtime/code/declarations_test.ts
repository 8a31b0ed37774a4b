import assert from "node:assert/strict";
import { join } from "node:path";
import { type DeclaredFunction, renderDeclarations } from "./declarations.ts";
import { CONFIGURE_TOOL, SEARCH_TOOL } from "../mcp/server.ts";

const HOSTILE = "*/ declare const injected: number; /*";

// Schemas as real tools (and hostile ones) write them.
const TRICKY: DeclaredFunction[] = [
  {
    name: "add",
    description: "Adds two numbers",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "integer" } },
      required: ["a"],
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: { sum: { type: "number" } },
      required: ["sum"],
    },
  },
  {
    name: "enum_tool",
    description: `Enums and consts ${HOSTILE}`,
    inputSchema: {
      type: "object",
      properties: {
        mode: { enum: ["a", "b", "*/", "\u2028line", 'q"uote'] },
        level: { enum: [1, -2, 0.5, 1e21, true, null] },
        kind: { const: "fixed", description: `${HOSTILE}\r\nsecond line` },
        both: { type: ["string", "null"], format: "uri" },
        maybe: { type: "string", nullable: true },
        many: { type: "string", enum: Array.from({ length: 500 }, String) },
      },
      required: ["mode"],
    },
  },
  {
    name: "node_tool",
    description: "A tree through $ref",
    inputSchema: {
      $ref: "#/$defs/node",
      $defs: {
        node: {
          type: "object",
          description: `A node ${HOSTILE}`,
          properties: {
            value: { type: "string" },
            children: { type: "array", items: { $ref: "#/$defs/node" } },
            parent: { $ref: "#/$defs/node" },
          },
          required: ["value"],
        },
      },
    },
    outputSchema: {
      type: "object",
      properties: { next: { $ref: "#" }, v: { type: "number" } },
    },
  },
  {
    name: "cycles",
    description: "Cycles that do not pass through a property",
    inputSchema: {
      type: "object",
      properties: {
        self: { $ref: "#/definitions/a" },
        mutual: { $ref: "#/definitions/b" },
        all: { $ref: "#/definitions/d" },
        escaped: { $ref: "#/definitions/x~1y" },
        missing: { $ref: "#/definitions/nope" },
        remote: { $ref: "https://example.com/schema.json" },
      },
      definitions: {
        a: { anyOf: [{ $ref: "#/definitions/a" }, { type: "string" }] },
        b: { oneOf: [{ $ref: "#/definitions/c" }, { type: "number" }] },
        c: { anyOf: [{ $ref: "#/definitions/b" }, { type: "boolean" }] },
        d: { allOf: [{ $ref: "#/definitions/d" }, { type: "object" }] },
        "x/y": { type: "string", title: "Escaped" },
      },
    },
  },
  {
    name: "hostile-names",
    description: HOSTILE,
    // Parsed, as a schema arrives: `__proto__` is an own property then.
    inputSchema: JSON.parse(`{
      "type": "object",
      "properties": {
        "constructor": { "type": "string" },
        "__proto__": { "type": "number" },
        "prototype": { "type": "boolean" },
        "a b": { "type": "string" },
        "1x": { "type": "string" },
        "": { "type": "string" },
        "*/": { "type": "string", "description": "*/" },
        "\\u2028": { "type": "string" },
        "ünï": { "type": "string" }
      },
      "required": ["constructor"]
    }`),
  },
  {
    name: "constructor",
    description: "A tool named like Object's own property",
    inputSchema: { type: "object" },
  },
  {
    name: "shapes",
    description: "Composition, tuples, records",
    inputSchema: {
      type: "object",
      properties: {
        both: {
          allOf: [
            { type: "object", properties: { x: { type: "number" } } },
            { type: "object", properties: { y: { type: "number" } } },
          ],
        },
        either: {
          oneOf: [
            { type: "object", properties: { k: { const: "a" } } },
            { type: "array", items: { type: ["string", "number"] } },
          ],
        },
        pair: { type: "array", prefixItems: [{ type: "string" }, {}] },
        old_pair: {
          type: "array",
          items: [{ type: "string" }, { type: "number" }],
          additionalItems: false,
        },
        scores: { type: "object", additionalProperties: { type: "number" } },
        mixed: {
          type: "object",
          properties: { id: { type: "string" } },
          additionalProperties: { type: "number" },
        },
        open: { type: "object", additionalProperties: true },
        closed: { type: "object", additionalProperties: false },
        nothing: false,
        anything: true,
        junk: 5,
        weird_type: { type: "float" },
        nested: {
          type: "array",
          items: { anyOf: [{ type: "string" }, { type: "number" }] },
        },
      },
    },
  },
  {
    name: "wide",
    description: "Ten thousand properties",
    inputSchema: {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 10_000 }, (_, i) => [`p${i}`, { type: "string" }]),
      ),
      required: ["p0", "p9999"],
    },
  },
  {
    name: "deep",
    description: "Nested fifty levels",
    inputSchema: deepSchema(50),
  },
  { name: "no_schema", description: "", inputSchema: null },
  SEARCH_TOOL as DeclaredFunction,
  CONFIGURE_TOOL as DeclaredFunction,
];

const SKILLS: DeclaredFunction[] = [{
  name: "summarize",
  description: "Summarizes text",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
  },
  outputSchema: {},
}, {
  name: "find-todos",
  description: "Finds TODOs",
  inputSchema: { type: "object", properties: { task: { type: "string" } } },
}];

function deepSchema(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < levels; i++) {
    schema = { type: "object", properties: { inner: schema } };
  }
  return schema;
}

// A schema's type as renderDeclarations() prints it for a tool's result.
function resultType(schema: unknown): string {
  const { text } = renderDeclarations({
    tools: [{
      name: "t",
      description: "",
      inputSchema: {},
      outputSchema: schema,
    }],
    skills: [],
  });
  return /=> Promise<([^]*)>;\n\};/.exec(text)?.[1] ?? text;
}

Deno.test("renderDeclarations() maps the JSON Schema keywords real tools use", () => {
  assert.equal(resultType({ type: "integer" }), "number");
  assert.equal(resultType({ type: ["string", "null"] }), "string | null");
  assert.equal(resultType({ type: "string", nullable: true }), "string | null");
  assert.equal(resultType({ enum: ["a", 1, null] }), '"a" | 1 | null');
  assert.equal(resultType({ const: "x" }), '"x"');
  assert.equal(resultType({ type: "string", format: "date-time" }), "string");
  assert.equal(
    resultType({ type: "array", items: { type: ["string", "number"] } }),
    "(string | number)[]",
  );
  assert.equal(
    resultType({ type: "array", prefixItems: [{ type: "string" }] }),
    "[string, ...unknown[]]",
  );
  assert.equal(
    resultType({ anyOf: [{ type: "string" }, { type: "boolean" }] }),
    "string | boolean",
  );
  assert.equal(
    resultType({ allOf: [{ anyOf: [{ const: 1 }, { const: 2 }] }, {}] }),
    "1 | 2",
  );
  assert.equal(
    resultType({ type: "object", additionalProperties: { type: "number" } }),
    "Record<string, number>",
  );
  assert.equal(resultType({ type: "object" }), "Record<string, unknown>");
  assert.equal(resultType({}), "unknown");
  assert.equal(resultType(false), "never");
  assert.equal(resultType({ type: "float" }), "unknown");
  assert.equal(
    resultType({
      type: "object",
      properties: { a: { type: "string", description: "The a" } },
      required: ["a"],
    }),
    "{\n    /** The a */\n    a: string;\n  }",
  );
});

Deno.test("renderDeclarations() declares recursive $refs as named aliases", () => {
  const { text } = renderDeclarations({ tools: TRICKY, skills: [] });
  assert.match(text, /^type node_tool_node = \{$/m);
  assert.match(text, /children\?: node_tool_node\[\];/);
  assert.match(text, /next\?: node_tool_result_Root;/);
  assert.match(
    text,
    /^type cycles_a = unknown \/\* cut: refers to itself \*\/ \| string;$/m,
  );
});

Deno.test("renderDeclarations() resolves $refs as the validator does", () => {
  // The validator follows anchors and `$id` bases; code mode's types must
  // follow the same targets, or the model is shown a type no call can meet.
  const { text } = renderDeclarations({
    tools: [{
      name: "refs",
      description: "",
      inputSchema: {
        $id: "https://example.com/refs.json",
        type: "object",
        properties: {
          pinned: { $ref: "#pin" },
          absolute: { $ref: "https://example.com/refs.json#/$defs/flag" },
          nested: {
            $id: "https://example.com/nested.json",
            type: "object",
            properties: { inner: { $ref: "#/$defs/x" } },
            $defs: { x: { type: "string" } },
          },
        },
        $defs: {
          pin: { $anchor: "pin", type: "number" },
          flag: { type: "boolean" },
          x: { type: "null" },
        },
      },
    }],
    skills: [],
  });
  assert.match(text, /^type refs_pin = number;$/m);
  assert.match(text, /pinned\?: refs_pin;/);
  assert.match(text, /^type refs_flag = boolean;$/m);
  assert.match(text, /absolute\?: refs_flag;/);
  // `#/$defs/x` under the nested `$id` is that schema's own `x`.
  assert.match(text, /^type refs_x = string;$/m);
});

Deno.test("renderDeclarations() makes args optional only where {} is valid", () => {
  const signature = (inputSchema: unknown) => {
    const { text } = renderDeclarations({
      tools: [{ name: "t", description: "", inputSchema }],
      skills: [],
    });
    return /^ {2}t: \(args\??/m.exec(text)?.[0].trim() ?? text;
  };
  const props = { a: { type: "string" }, b: { type: "number" } };
  assert.equal(signature({ type: "object", properties: props }), "t: (args?");
  assert.equal(signature(null), "t: (args?");
  assert.equal(
    signature({ type: "object", properties: props, required: ["a"] }),
    "t: (args",
  );
  // No `required` list, yet `{}` is refused: a call without args fails.
  assert.equal(
    signature({ type: "object", properties: props, minProperties: 1 }),
    "t: (args",
  );
  assert.equal(
    signature({
      type: "object",
      properties: props,
      anyOf: [{ required: ["a"] }, { required: ["b"] }],
    }),
    "t: (args",
  );
  // A schema the validator cannot compile refuses every call.
  assert.equal(
    signature({ type: "object", properties: { s: { pattern: "^(?=x)" } } }),
    "t: (args",
  );
});

Deno.test("renderDeclarations() keeps hostile text inside its comments", () => {
  const { text } = renderDeclarations({ tools: TRICKY, skills: SKILLS });
  assert.ok(!text.includes(HOSTILE), "a */ in a description closed a comment");
  assert.match(text, /\*\\\/ declare const injected/);
  assert.match(text, /"constructor": string;/);
  assert.match(text, /"__proto__"\?: number;/);
  assert.match(text, /"a b"\?: string;/);
  assert.match(text, /"hostile-names": \(args: \{/);
  assert.match(text, /"find-todos": \(args\?: \{/);
});

Deno.test("renderDeclarations() bounds huge and deep schemas", () => {
  const { text } = renderDeclarations({ tools: TRICKY, skills: [] });
  assert.match(
    text,
    /cut: 9900 more properties \*\/ \[key: string\]: unknown;/,
  );
  assert.match(text, /cut: nested deeper than 12 levels/);
  assert.ok(text.length < 100_000, `${text.length} characters`);
  const many = Array.from({ length: 2000 }, (_, i) => ({
    ...TRICKY[0]!,
    name: `tool_${i}`,
  }));
  const small = renderDeclarations({ tools: many, skills: SKILLS }, {
    maxChars: 10_000,
  });
  assert.ok(small.text.length < 11_000, `${small.text.length} characters`);
  assert.equal(small.omitted, 2002 - small.tools.length - small.skills.length);
  assert.match(small.text, /more left out to keep this under 10000 characters/);
  const nodes = renderDeclarations({ tools: [TRICKY[7]!], skills: [] }, {
    maxNodes: 50,
    maxProperties: 100_000,
    maxChars: 10_000_000,
  });
  assert.match(nodes.text, /cut: more than 50 schema nodes/);
});

Deno.test("renderDeclarations() output compiles, and its types are real", async (t) => {
  const { text, tools, skills } = renderDeclarations({
    tools: TRICKY,
    skills: SKILLS,
    header: ["For this session", HOSTILE],
    notes: [`Note ${HOSTILE}\u2028next`],
  });
  assert.equal(tools.length, TRICKY.length);
  assert.equal(skills.length, SKILLS.length);
  const good = `
const sum: number = (await tools.add({ a: 1, b: 2 })).sum;
await tools.add({ a: 1 });
await tools.enum_tool({ mode: "*/", level: 1e21, kind: "fixed", both: null, many: "7" });
const tree = await tools.node_tool({ value: "x", children: [{ value: "y" }] });
const v: number | undefined = tree.next?.next?.v;
await tools["hostile-names"]({ "constructor": "c", ["__proto__"]: 1, "a b": "", "": "" });
await tools["constructor"]();
await tools.shapes({
  both: { x: 1, y: 2 }, either: ["a", 1], pair: ["a", { any: 1 }],
  old_pair: ["a", 1], scores: { a: 1 }, mixed: { id: "x", other: 2 },
  open: { a: 1 }, closed: {}, anything: 1, junk: null,
});
await tools.cycles({ self: "s", mutual: 1, escaped: "e" });
await tools.wide({ p0: "a", p9999: "b", p50: "c" });
await tools.no_schema({ anything: 1 });
const found = await tools.search_tools({ query: "csv" });
found.tools[0]?.inputSchema;
await skills.summarize({ text: "hi" });
await skills["find-todos"]();
console.log(sum, v);
export {};
`;
  const bad: Record<string, string> = {
    wrong_argument_type: `await tools.add({ a: "one" });`,
    missing_required: `await tools.add({ b: 1 });`,
    unknown_tool: `await tools.nope({});`,
    wrong_result_type: `const s: string = (await tools.add({ a: 1 })).sum;`,
    not_in_enum: `await tools.enum_tool({ mode: "c" });`,
    wrong_skill_argument: `await skills.summarize({ text: 5 });`,
    excess_property: `await tools.add({ a: 1, c: 2 });`,
    nested_wrong:
      `await tools.node_tool({ value: "x", children: [{ value: 1 }] });`,
    injected_name: `const n: number = injected;`,
    never_property: `await tools.shapes({ nothing: 1 });`,
  };
  const dir = await Deno.makeTempDir();
  try {
    await t.step("correct uses compile", async () => {
      const file = join(dir, "good.ts");
      await Deno.writeTextFile(file, text + good);
      const out = await check([file]);
      assert.equal(out.code, 0, out.text);
    });
    await t.step("each wrong use fails to compile", async () => {
      const files = [];
      for (const [name, snippet] of Object.entries(bad)) {
        const file = join(dir, `bad_${name}.ts`);
        await Deno.writeTextFile(file, `${text}\n${snippet}\nexport {};\n`);
        files.push(file);
      }
      const out = await check(files);
      assert.notEqual(out.code, 0);
      for (const name of Object.keys(bad)) {
        assert.match(out.text, new RegExp(`bad_${name}\\.ts:`), name);
      }
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function check(files: string[]): Promise<{ code: number; text: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["check", "--quiet", "--no-config", "--no-lock", ...files],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, text: decode(out.stdout) + decode(out.stderr) };
}

Deno.test("renderDeclarations() stops rendering a schema that outgrows the text", () => {
  // One enum, inlined by every branch of an allOf: two kilobytes of schema
  // would render to megabytes of text before being left out as too long.
  // Each member is read through a getter, which counts the reads (copying
  // the schema to resolve its `$ref`s reads each once).
  let reads = 0;
  const counted: string[] = [];
  for (let i = 0; i < 10; i++) {
    const member = `${i}`.padEnd(1000, "x");
    Object.defineProperty(counted, i, {
      get: () => (reads++, member),
      enumerable: true,
    });
  }
  const hostile: DeclaredFunction = {
    name: "wide_enum",
    description: "",
    inputSchema: {
      allOf: Array.from({ length: 1999 }, () => ({ $ref: "#/$defs/d" })),
      $defs: { d: { enum: counted } },
    },
  };
  const { tools, omitted } = renderDeclarations(
    { tools: [hostile, TRICKY[0]!], skills: [] },
    { maxChars: 30_000 },
  );
  assert.deepEqual(tools, ["add"]);
  assert.equal(omitted, 1);
  assert.ok(reads < 200, `${reads} enum members rendered`);
});
