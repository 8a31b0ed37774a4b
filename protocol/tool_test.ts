import assert from "node:assert/strict";
import { tool, toolDefinition } from "./tool.ts";

Deno.test("tool() and toolDefinition() fill every A2E default", () => {
  assert.deepEqual(tool({ name: "t", description: "d" }), {
    name: "t",
    description: "d",
    inputSchema: { type: "object" },
    outputSchema: {},
    streaming: true,
    idempotent: false,
    tags: [],
    version: "1.0.0",
    toolkit: null,
    deferLoading: false,
  });
  assert.deepEqual(toolDefinition({ name: "t", description: "d" }), {
    name: "t",
    description: "d",
    input_parameters: [],
    output_parameters: [],
    streaming: true,
    idempotent: false,
    tags: [],
    version: "1.0.0",
    toolkit: null,
    defer_loading: false,
  });
});

Deno.test("tool() and toolDefinition() keep what is given over the defaults", () => {
  const given = tool({
    name: "t",
    description: "d",
    inputSchema: { type: "object", required: ["a"] },
    tags: ["x"],
    toolkit: "fs",
  });
  assert.deepEqual(given.inputSchema, { type: "object", required: ["a"] });
  assert.deepEqual([given.tags, given.toolkit], [["x"], "fs"]);
  const def = toolDefinition({ name: "t", description: "d", streaming: false });
  assert.equal(def.streaming, false);
  // Each call has its own lists: changing one changes no other.
  (tool({ name: "a", description: "" }).tags as string[]).push("leak");
  assert.deepEqual(tool({ name: "b", description: "" }).tags, []);
  toolDefinition({ name: "a", description: "" }).tags.push("leak");
  assert.deepEqual(toolDefinition({ name: "b", description: "" }).tags, []);
});
