import assert from "node:assert/strict";
import { describeExports } from "./describe.ts";

Deno.test("describeExports() lists default first, then the rest in code-unit order", () => {
  // localeCompare's order depends on the machine's locale (and the
  // discovery process's environment is cleared): "a" came before "B".
  const tool = (name: string) => ({ kind: "tool", name, run: () => 1 });
  const mod: Record<string, unknown> = {
    b: tool("b"),
    a: tool("a"),
    default: tool("d"),
    B: tool("B"),
    "é": tool("e"),
  };
  const hooks = { zodToJsonSchema: () => null, stringifyObject: String };
  const order = describeExports(Object.keys(mod), (n) => mod[n], hooks)
    .map((d) => d.export);
  assert.deepEqual(order, ["default", "B", "a", "b", "é"]);
});
