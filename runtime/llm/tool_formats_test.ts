import assert from "node:assert/strict";
import {
  stripIntention,
  toAnthropicTools,
  toolInputSchema,
  toOpenAiTools,
} from "./tool_formats.ts";
import { decodeTool, toolDefinition } from "../../protocol/tool.ts";

// A tool as a client decodes it from a host's list: its schema is rebuilt
// from the wire's parameters.
const READ_FILE = decodeTool({
  ...toolDefinition({
    name: "read_file",
    description: "Reads a text file",
    input_parameters: [
      {
        name: "path",
        type: "string",
        description: "Path inside the root",
        required: true,
        enum: null,
        properties: null,
      },
      {
        name: "encoding",
        type: "string",
        description: "Text encoding",
        required: false,
        enum: ["utf-8", "latin1"],
        properties: null,
      },
      {
        name: "range",
        type: "object",
        description: "Lines to read",
        required: false,
        enum: null,
        properties: {
          start: {
            name: "start",
            type: "integer",
            description: "First line",
            required: true,
            enum: null,
            properties: null,
          },
        },
      },
    ],
  }),
});

const READ_FILE_SCHEMA = {
  type: "object",
  properties: {
    path: { type: "string", description: "Path inside the root" },
    encoding: {
      type: "string",
      description: "Text encoding",
      enum: ["utf-8", "latin1"],
    },
    range: {
      type: "object",
      description: "Lines to read",
      properties: { start: { type: "integer", description: "First line" } },
      required: ["start"],
    },
  },
  required: ["path"],
};

Deno.test("a tool decoded from the wire offers the schema rebuilt from its parameters", () => {
  assert.deepEqual(toolInputSchema(READ_FILE), READ_FILE_SCHEMA);
});

Deno.test("toOpenAiTools() and toAnthropicTools() wrap the schema each API's way", () => {
  assert.deepEqual(toOpenAiTools([READ_FILE]), [{
    type: "function",
    function: {
      name: "read_file",
      description: "Reads a text file",
      parameters: READ_FILE_SCHEMA,
    },
  }]);
  assert.deepEqual(toAnthropicTools([READ_FILE]), [{
    name: "read_file",
    description: "Reads a text file",
    input_schema: READ_FILE_SCHEMA,
  }]);
});

Deno.test("a zod-made schema loses $schema and always has type object", () => {
  const [tool] = toAnthropicTools([{
    name: "t",
    description: "d",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      additionalProperties: false,
    },
  }]);
  assert.deepEqual(tool?.input_schema, {
    type: "object",
    properties: {},
    additionalProperties: false,
  });
});

Deno.test("intention: added as an optional argument, stripped before the tool runs", async (t) => {
  await t.step("added to every tool, never required", () => {
    for (
      const schema of [
        toOpenAiTools([READ_FILE], { intention: true })[0]!.function.parameters,
        toAnthropicTools([READ_FILE], { intention: true })[0]!.input_schema,
      ]
    ) {
      const properties = schema.properties as Record<string, { type: string }>;
      assert.equal(properties.intention?.type, "string");
      assert.deepEqual(schema.required, ["path"]);
      assert.ok("path" in properties);
    }
    // Not asked for: not added.
    const plain = toOpenAiTools([READ_FILE])[0]!.function.parameters;
    assert.ok(!("intention" in (plain.properties ?? {})));
  });

  await t.step("stripped, and returned", () => {
    assert.deepEqual(
      stripIntention({ path: "a", intention: "Check the config" }, READ_FILE),
      { arguments: { path: "a" }, intention: "Check the config" },
    );
    assert.deepEqual(stripIntention({ path: "a" }), {
      arguments: { path: "a" },
      intention: null,
    });
  });

  await t.step("a tool's own intention argument is left alone", () => {
    const own = {
      name: "plan",
      description: "Records a plan",
      inputSchema: {
        type: "object",
        properties: { intention: { type: "string", description: "The plan" } },
      },
    };
    const [converted] = toOpenAiTools([own], { intention: true });
    assert.deepEqual(
      converted?.function.parameters.properties,
      own.inputSchema.properties,
    );
    assert.deepEqual(stripIntention({ intention: "ship it" }, own), {
      arguments: { intention: "ship it" },
      intention: null,
    });
  });
});
