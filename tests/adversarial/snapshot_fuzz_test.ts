// A seeded campaign of hostile drop-in definitions (prototype keys as
// names, wrong field types, huge schemas) against the snapshot builder: it
// never throws, and every definition is served sanely or reported.

import assert from "node:assert/strict";
import { buildSnapshot } from "../../runtime/registry/snapshot.ts";
import type { LoadedModule } from "../../runtime/registry/snapshot.ts";
import { PROTO_KEYS, Rng } from "../support/fuzz.ts";

const ODD: unknown[] = [
  42,
  -1,
  null,
  true,
  "",
  "x".repeat(100_000),
  [],
  [1, "a", null],
  {},
  { __proto__: { polluted: 1 } },
  Object.fromEntries(PROTO_KEYS.map((k) => [k, k])),
  {
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: 2000 }, (_, i) => [`p${i}`, { type: "string" }]),
    ),
  },
];

const FIELDS = [
  "description",
  "version",
  "tags",
  "input",
  "input_schema",
  "output",
  "output_schema",
  "streaming",
  "idempotent",
  "toolkit",
  "prompt",
  "isolation",
  "alias",
  "tools",
  "config",
  "icon_svg",
  ...PROTO_KEYS,
];

function definition(rng: Rng, i: number) {
  const fields: Record<string, unknown> = { description: "d" };
  for (let k = rng.int(4); k > 0; k--) {
    Object.defineProperty(fields, rng.pick(FIELDS), {
      value: rng.pick(ODD),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  const name = rng.pick<unknown>([
    ...PROTO_KEYS,
    "",
    "ü-name",
    "a\nb",
    "n".repeat(300),
    `ok_${i}`,
    `ok_${i}`.toUpperCase(),
  ]);
  return {
    export: rng.pick(["default", "tool", ...PROTO_KEYS]),
    kind: rng.pick(["tool", "toolkit", "skill"] as const),
    name: name as string,
    fields,
    permissions: rng.pick<unknown>([{}, null, { net: 1 }, {
      env: "x",
    }]) as Record<string, unknown>,
    runnable: rng.chance(0.8),
  };
}

Deno.test("hostile definitions never break the snapshot", () => {
  const rng = new Rng(0xbad5eed);
  for (let round = 0; round < 40; round++) {
    const modules = Array.from({ length: 12 }, (_, i) => ({
      origin: "file",
      root: "/s",
      module: {
        path: `/s/m${i}.ts`,
        hash: "h",
        error: null,
        definitions: [definition(rng, i), definition(rng, i)],
      },
    })) as unknown as LoadedModule[];
    const good = {
      origin: "file",
      root: "/s",
      module: {
        path: "/s/good.ts",
        hash: "h",
        error: null,
        definitions: [{
          export: "default",
          kind: "tool",
          name: "good_tool",
          fields: { description: "Good" },
          permissions: {},
          runnable: true,
        }],
      },
    } as unknown as LoadedModule;
    const snap = buildSnapshot([...modules, good]);
    assert.equal(snap.tools.get("good_tool")?.path, "/s/good.ts");
    for (const [name, tool] of snap.tools) {
      assert.match(name, /^[A-Za-z0-9_.-]{1,64}$/);
      assert.equal(typeof tool.description, "string");
      JSON.stringify(tool);
    }
    for (const e of snap.errors) {
      assert.equal(typeof e.message, "string");
      assert.doesNotMatch(e.message, /\n\s+at /);
    }
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});
