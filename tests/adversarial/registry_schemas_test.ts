/**
 * Hostile JSON Schemas in modules, tried against a real host: a toolkit
 * whose configuration schema refers to itself from several properties
 * (walked by paths, it branches at every level) must not hold the host's
 * thread when a client lists toolkits: its secrets are found by walking a
 * configuration with it, so it loads. A tool whose input schema, thirty
 * lines long, makes every call's arguments be checked against 2^30
 * subschemas is refused at load with its reason, and the other definitions
 * keep working for every session.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost } from "../../runtime/host.ts";
import { connect } from "../../client/mod.ts";

// Four properties each referring to the whole schema: walked to depth 32,
// 4^16 branches.
const LOOP_KIT = `export default {
  kind: "toolkit",
  name: "loop",
  description: "Refers to itself",
  config: {
    type: "object",
    properties: {
      a: { $ref: "#" }, b: { $ref: "#" }, c: { $ref: "#" }, d: { $ref: "#" },
      token: { type: "string", secret: true },
    },
  },
};
`;

// Thirty definitions, each "anyOf" the one before twice.
const BOMB = `const defs = { l0: { type: "string" } };
for (let i = 1; i <= 30; i++) {
  defs["l" + i] = { anyOf: [{ $ref: "#/$defs/l" + (i - 1) }, { $ref: "#/$defs/l" + (i - 1) }] };
}
export default {
  kind: "tool",
  name: "bomb",
  description: "Checks its arguments forever",
  input: { $defs: defs, type: "object", properties: { x: { $ref: "#/$defs/l30" } } },
  run: () => ({ text: "never" }),
};
`;

const HELLO = `export default {
  kind: "tool",
  name: "hello",
  description: "Says hello",
  run: () => ({ text: "hello" }),
};
`;

Deno.test("a toolkit or tool whose schema branches without end is refused and holds no one's listing or call", async () => {
  const ops = await Deno.makeTempDir({ prefix: "schemas_ops_" });
  await Deno.mkdir(join(ops, "loop"));
  await Deno.writeTextFile(join(ops, "loop", "toolkit.ts"), LOOP_KIT);
  await Deno.writeTextFile(join(ops, "hello.ts"), HELLO);
  await Deno.writeTextFile(join(ops, "bomb.ts"), BOMB);
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
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const error = report.errors.find((e) => /loop/.test(e.path));
    assert.equal(error, undefined, JSON.stringify(report.errors));
    const bomb = report.errors.find((e) => /bomb\.ts$/.test(e.path));
    assert.ok(bomb, JSON.stringify(report.errors));
    assert.match(
      bomb.message,
      /^Cannot load tool "bomb" from ".*bomb\.ts": its "input" schema applies more than 1000 subschemas to one value/,
    );
    const client = await connect(url.replace("http", "ws") + "/a2e");
    try {
      const kits = await client.toolkits.list();
      assert.deepEqual(kits.map((k) => k.name), ["loop"]);
      const called = await client.tools.call("bomb", { x: "s" }).then(
        (outcome) => JSON.stringify(outcome),
        (error: Error) => error.message,
      );
      assert.match(called, /bomb/);
      assert.doesNotMatch(called, /never/);
      const out = await client.tools.call("hello", {});
      assert.equal(out.success, true, JSON.stringify(out));
    } finally {
      await client.close();
    }
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(ops, { recursive: true });
  }
});
