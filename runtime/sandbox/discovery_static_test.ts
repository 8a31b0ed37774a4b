import assert from "node:assert/strict";
import { join } from "node:path";
import { runDiscoveryProcess } from "./_discovery_process.ts";
import { describeStatically, MAX_STATIC_SOURCE } from "./discovery_static.ts";
import { loadBootstrap, sandboxEnv } from "./spawn.ts";

const LIMIT = { maxResultBytes: 1 << 20 };

// Shapes the static path must answer, exactly as a worker does.
const LITERAL: [string, string][] = [
  ["plain", `export default { kind: "tool", name: "a", run: () => 1 };`],
  [
    "every literal",
    `export default { kind: "tool", name: "b", description: "d\\n\\u00e9",
      n: 1.5, neg: -2, pos: +3, zero: -0, big: 1e400, hex: 0x1f, sep: 1_000,
      t: true, f: false, nil: null, u: undefined, nan: NaN, inf: -Infinity,
      tpl: \`x\\ty\`, list: [1, "two", null, [3], { four: 4 }, () => 5],
      nested: { deep: { deeper: [{ a: 1, fn() {} }] } },
      run(a, c) { return a; } };`,
  ],
  [
    "keys and order",
    `export default { kind: "toolkit", name: "c", z: 1, 10: "ten", 2: "two",
      "quoted key": 1, 1.50: "num", a: 1, z: 2, 'single': 's' };`,
  ],
  [
    "schemas and permissions",
    `export default { kind: "tool", name: "d",
      input: { type: "object", properties: { x: { type: "number" } } },
      output: [1, 2], input_schema: null, config: undefined,
      permissions: { read: ["/a", 1, true, null, undefined], net: "x", env: [] },
      run: async () => 1 };`,
  ],
  [
    "dynamic permissions, no run",
    `export default { kind: "skill", name: 7, permissions: (c) => ({}) };`,
  ],
  [
    "typescript",
    `import type { ToolDef } from "../nowhere/types.ts";
     interface Args { a: number }
     type Out = { b: string };
     declare const host: string;
     export type { Args };
     function helper(x: Args): Out { return { b: String(x.a) }; }
     const schema = { type: "object" } as const;
     export default {
       kind: "tool", name: "e", input: schema, output: schema!,
       run: (a: Args): Out => helper(a),
     } satisfies ToolDef<Args>;`,
  ],
  [
    "named exports",
    `export const second = { kind: "tool", name: "second" };
     export const notDef = { kind: "other" };
     export const str = "tool";
     export function fn() {}
     const first = { kind: "tool" };
     export { first as "a first", first as Zed };
     export default { kind: "toolkit", name: "kit" };`,
  ],
  ["default function", `export default function () { return 1; }`],
  ["nothing exported", `const a = 1;`],
  ["default array", `export default [{ kind: "tool", name: "x" }];`],
  ["no kind", `export default { name: "x" };`],
  [
    "joined and concatenated texts",
    `const lines = ["one", 2, null, undefined, true, -0];
     const sep = " | ";
     export default { kind: "tool", name: "j" + 1 + 2, a: lines.join(sep),
       b: ["x", "y"].join(), c: [].join("-"), d: 1 + 2 + "z",
       e: \`long \` + "text", f: ["p", "q"].join("\\n") + "!" };`,
  ],
  [
    "shared references",
    `const list = ["a"]; const o = { list, again: list };
     export default { kind: "tool", name: "g", o, p: { read: list } };`,
  ],
];

// Shapes that must go to the Worker (running code, or not decidable).
const DYNAMIC: [string, string][] = [
  ["call", `export default { kind: "tool", name: String(1) };`],
  [
    "value import",
    `import x from "./x.ts"; export default { kind: "tool", name: "x" };`,
  ],
  ["re-export", `export * from "./x.ts";`],
  ["getter", `export default { kind: "tool", get name() { return "g"; } };`],
  ["spread", `const a = {}; export default { kind: "tool", ...a };`],
  ["computed", `export default { kind: "tool", ["name"]: "c" };`],
  ["proto", `export default { __proto__: { kind: "tool" }, name: "p" };`],
  [
    "toJSON",
    `export default { kind: "tool", name: "j", d: { toJSON() { return 1; } } };`,
  ],
  [
    "statement",
    `globalThis.x = 1; export default { kind: "tool", name: "s" };`,
  ],
  ["let", `let a = 1; export default { kind: "tool", name: "l", a };`],
  ["class", `export default class {}`],
  ["TDZ", `export default { kind: "tool", name: "t", a }; const a = 1;`],
  ["unknown global", `export default { kind: "tool", name: "u", a: window };`],
  [
    "zod-like schema",
    `export default { kind: "tool", name: "z", input: { _zod: 1 } };`,
  ],
  [
    "object in permissions",
    `export default { kind: "tool", name: "o", permissions: { read: [{}] } };`,
  ],
  ["regexp", `export default { kind: "tool", name: "r", re: /a/ };`],
  [
    "template substitution",
    "const a = 1; export default { kind: \`tool${a}\` };",
  ],
  ["syntax error", `export default { kind: "tool", name: };`],
  [
    "types in a .js file",
    `export default { kind: "tool", name: "x" } as const;`,
  ],
  ["enum", `enum E { A } export default { kind: "tool", name: "e" };`],
  ["bigint", `export default { kind: "tool", name: "b", n: 1n };`],
  ["hole", `export default { kind: "tool", name: "h", a: [1, , 2] };`],
  [
    "join of an object",
    `export default { kind: "tool", name: ["a", {}].join("") };`,
  ],
  [
    "join of an array",
    `export default { kind: "tool", name: ["a", ["b"]].join("") };`,
  ],
  [
    "join with an object",
    `export default { kind: "tool", name: ["a"].join({}) };`,
  ],
  ["join of a string", `export default { kind: "tool", name: "ab".join("") };`],
  [
    "computed join",
    `export default { kind: "tool", name: ["a"]["join"]("") };`,
  ],
  ["optional join", `export default { kind: "tool", name: ["a"]?.join("") };`],
  ["map", `export default { kind: "tool", name: ["a"].map(String) };`],
  ["minus", `export default { kind: "tool", name: "t", n: 2 - 1 };`],
  ["plus an object", `export default { kind: "tool", name: "t" + {} };`],
  ["plus a boolean", `export default { kind: "tool", name: "t" + true };`],
];

function file(dir: string, i: number, label: string): string {
  return join(dir, `m${i}${label === "types in a .js file" ? ".js" : ".ts"}`);
}

Deno.test("the static path answers exactly what a worker answers, for every literal shape", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const paths = await Promise.all(LITERAL.map(async ([label, source], i) => {
      const path = file(dir, i, label);
      await Deno.writeTextFile(path, source);
      return path;
    }));
    const report = await runDiscoveryProcess(
      paths.map((path) => ({ path, read: [path] })),
      {
        bootstrap: await loadBootstrap(),
        workers: 3,
        timeoutMs: 30_000,
        memoryMb: 256,
        maxResultBytes: LIMIT.maxResultBytes,
        deny: [],
        cwd: dir,
        env: sandboxEnv({}),
      },
    );
    for (const [i, [label, source]] of LITERAL.entries()) {
      const worker = report.answers.get(i);
      assert.ok(
        worker?.ok,
        `${label}: the worker failed: ${JSON.stringify(worker)}`,
      );
      const literal = await describeStatically(paths[i]!, source, LIMIT);
      assert.notEqual(literal, null, `${label}: not answered statically`);
      assert.deepEqual(literal, worker.value, label);
      // The same key order too (deepEqual ignores it).
      assert.equal(
        JSON.stringify(literal),
        JSON.stringify(worker.value),
        label,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the static path leaves every shape that runs code to the worker", async () => {
  for (const [i, [label, source]] of DYNAMIC.entries()) {
    const path = file("/nowhere", i, label);
    assert.equal(await describeStatically(path, source, LIMIT), null, label);
  }
});

Deno.test("the static path refuses long sources and long answers", async () => {
  const pad = " ".repeat(MAX_STATIC_SOURCE);
  const module = `export default { kind: "tool", name: "x", d: "${
    "y".repeat(100)
  }" };`;
  assert.equal(await describeStatically("/a.ts", module + pad, LIMIT), null);
  assert.notEqual(await describeStatically("/a.ts", module, LIMIT), null);
  assert.equal(
    await describeStatically("/a.ts", module, { maxResultBytes: 50 }),
    null,
  );
  // Nesting deeper than the parser's stack: no answer, no crash.
  const deep = `export default { kind: "tool", a: ${"[".repeat(20000)}${
    "]".repeat(20000)
  } };`;
  assert.equal(await describeStatically("/a.ts", deep, LIMIT), null);
});

Deno.test("the static path never runs a line of the module in the host", async () => {
  const marker = "__skillbox_static_pwned";
  const hostile = [
    `export default { kind: "tool", name: "a", run() { globalThis.${marker} = 1; } };`,
    `export default { kind: "tool", name: "b", permissions: { read: [{ toString() { globalThis.${marker} = 1; return "/"; } }] } };`,
    `export default { kind: "tool", name: "c", d: { toJSON() { globalThis.${marker} = 1; } } };`,
    `export default { kind: "tool", get name() { globalThis.${marker} = 1; return "d"; } };`,
    `export default { kind: "tool", name: "e", input: { get _zod() { globalThis.${marker} = 1; return 1; } } };`,
  ];
  for (const source of hostile) {
    await describeStatically("/h.ts", source, LIMIT);
  }
  assert.equal(marker in globalThis, false);
});
