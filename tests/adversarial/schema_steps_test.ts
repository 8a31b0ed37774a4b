/**
 * A tool whose input schema applies itself twice to the same child (`L` is
 * an `allOf` of two branches whose property `a` refers back to `L`) passes
 * the load-time fan-out check, which counts subschemas on one value only,
 * yet doubles the validator's work at every level of the value. Called with
 * a value twenty levels deep down one branch, it would hold the host's
 * thread for seconds (and for ever at forty); it must be refused with the
 * step bound while another client's call is served.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost } from "../../runtime/host.ts";
import { connect } from "../../client/mod.ts";

const DOUBLING =
  `const branch = () => ({ properties: { a: { $ref: "#/$defs/L" } } });
export default {
  kind: "tool",
  name: "doubling",
  description: "Checks each level of its argument twice",
  input: {
    type: "object",
    properties: { x: { $ref: "#/$defs/L" } },
    $defs: { L: { allOf: [branch(), branch()] } },
  },
  run: () => ({ text: "checked" }),
};
`;

const HELLO = `export default {
  kind: "tool",
  name: "hello",
  description: "Says hello",
  run: () => ({ text: "hello" }),
};
`;

// `{x: {a: {a: ...}}}`: one object per level, a single path down.
function chain(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return { x: value };
}

Deno.test("a value that doubles its schema's work at each level is refused while others are served", async () => {
  const ops = await Deno.makeTempDir({ prefix: "schema_steps_" });
  await Deno.writeTextFile(join(ops, "doubling.ts"), DOUBLING);
  await Deno.writeTextFile(join(ops, "hello.ts"), HELLO);
  const host = createHost({
    log: () => {},
    config: {
      skills: [ops],
      builtinSkills: false,
      sandbox: {
        cacheDir: null,
        memoryMb: 256,
        maxIdleProcesses: 4,
        spareWorkers: 1,
        maxResultBytes: 1 << 20,
      },
    },
  });
  try {
    const report = await host.ready;
    assert.deepEqual(report.errors, []);
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const ws = url.replace("http", "ws") + "/a2e";
    const attacker = await connect(ws);
    const other = await connect(ws);
    try {
      // A shallow value is checked and the tool runs: the schema is usable.
      const shallow = await attacker.tools.call("doubling", chain(4));
      assert.equal(shallow.success, true, JSON.stringify(shallow));
      const [deep, hello] = await Promise.all([
        attacker.tools.call("doubling", chain(20)).then(
          (outcome) => JSON.stringify(outcome),
          (error: Error) => error.message,
        ),
        other.tools.call("hello", {}),
      ]);
      assert.match(
        deep,
        /Invalid arguments for tool \\?"doubling\\?": The value takes more than 200,000 schema steps to check/,
      );
      assert.doesNotMatch(deep, /checked/);
      assert.equal(hello.success, true, JSON.stringify(hello));
      const again = await other.tools.call("hello", {});
      assert.equal(again.success, true, JSON.stringify(again));
    } finally {
      await attacker.close();
      await other.close();
    }
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(ops, { recursive: true });
  }
});
