import assert from "node:assert/strict";
import { join } from "node:path";
import { type BatchReport, runDiscoveryProcess } from "./queue.ts";
import type { DiscoveryModule } from "../../protocol/sandbox/pipe.ts";
import { describeStatically, MAX_STATIC_SOURCE } from "./static.ts";
import { loadBootstrap } from "../sandbox/bootstrap_text.ts";
import { sandboxEnv } from "../sandbox/sandbox_process.ts";
import { moduleGraph } from "./module_graph.ts";

const LIMIT = { maxResultBytes: 1 << 20 };

// What real workers answer for `modules`, in one discovery process.
async function workerAnswers(
  modules: DiscoveryModule[],
  cwd: string,
): Promise<BatchReport> {
  return await runDiscoveryProcess(modules, {
    bootstrap: await loadBootstrap(),
    workers: 3,
    timeoutMs: 30_000,
    memoryMb: 256,
    maxResultBytes: LIMIT.maxResultBytes,
    deny: [],
    cwd,
    env: sandboxEnv({}),
  });
}

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
    const report = await workerAnswers(
      paths.map((path) => ({ path, read: [path] })),
      dir,
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

Deno.test("the static path parses at most 16 KiB, in the host's one thread", async () => {
  // Parsing and evaluating one 61 KB literal module held the host's thread
  // 120-200 ms per describe, with no deadline; the shipped modules that
  // take this path are under 10 KB.
  const literal = (chars: number) => {
    const entry = `  { name: "x", description: "${"d".repeat(50)}" },\n`;
    const entries = entry.repeat(Math.floor(chars / entry.length));
    return `export default { kind: "tool", name: "t", list: [\n${entries}] };`;
  };
  assert.notEqual(
    await describeStatically("/a.ts", literal(15_000), LIMIT),
    null,
  );
  assert.equal(await describeStatically("/a.ts", literal(17_000), LIMIT), null);
});

Deno.test("the static path parses at most MAX_STATIC_SOURCE of a module's whole graph", async () => {
  // Each file under the bound, the graph over it: parsed in the host's one
  // thread, 300 such files held it for 38 s, where a worker has a deadline.
  const half = Math.ceil(MAX_STATIC_SOURCE / 2);
  const pad = (text: string) => text + " ".repeat(half - text.length);
  const imports = new Map([
    ["/s/a.ts", pad(`export const a = 1;\n`)],
    ["/s/b.ts", pad(`export const b = 2;\n`)],
  ]);
  const module = `import { a } from "./a.ts";\nimport { b } from "./b.ts";
    export default { kind: "tool", name: "t", n: a + b, run: () => 1 };`;
  const one = new Map([...imports].slice(0, 1));
  const alone = `import { a } from "./a.ts";
    export default { kind: "tool", name: "t", n: a, run: () => 1 };`;
  const read = await describeStatically("/s/m.ts", alone, {
    ...LIMIT,
    imports: one,
  });
  assert.equal(read?.[0]?.fields.n, 1);
  assert.equal(
    await describeStatically("/s/m.ts", module, { ...LIMIT, imports }),
    null,
  );
});

Deno.test("the static path gives up on a value that names another many times", async (t) => {
  // A module of a few lines can name one value 2^40 times ([a, a] nested, a + a,
  // [a, a].join(a)): serialized in the host, that held its one thread for
  // ever (or its memory), where a worker is stopped at its deadline.
  const shapes: [string, string][] = [
    ["arrays", "[a, a]"],
    ["objects", "{ l: a, r: a }"],
    ["strings", "a + a"],
    ["joins", "[a, a, a, a].join(a)"],
  ];
  for (const [label, step] of shapes) {
    await t.step(label, async () => {
      const lines = ['const a0 = "xxxxxxxx";'];
      for (let i = 1; i <= 40; i++) {
        lines.push(`const a${i} = ${step.replaceAll("a", `a${i - 1}`)};`);
      }
      lines.push(
        'export default { kind: "tool", name: "t", d: a40, run: () => 1 };',
      );
      const url = new URL("./static.ts", import.meta.url).href;
      const script = `import { describeStatically } from ${JSON.stringify(url)};
        const got = await describeStatically("/a.ts", Deno.args[0],
          { maxResultBytes: 1 << 20 });
        console.log(JSON.stringify(got));`;
      // In a process of its own: on failure it never ends, and is killed.
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["eval", "--quiet", script, lines.join("\n")],
        stdout: "piped",
        stderr: "inherit",
        signal: AbortSignal.timeout(20_000),
      }).output();
      assert.equal(out.code, 0, "still serializing after 20 s");
      assert.equal(new TextDecoder().decode(out.stdout).trim(), "null");
    });
  }
});

Deno.test("the static path gives up on a definition exported under many names", async () => {
  // Each value is bounded, but each export is described on its own: one
  // definition just under the answer bound, exported under a thousand
  // names in 16 KiB, was copied a thousand times in the host (about 1 GiB
  // and 19 s of its one thread) before the answer was found too long.
  const lines = [`const a0 = "${"x".repeat(1000)}";`];
  for (let i = 1; i <= 9; i++) {
    lines.push(`const a${i} = [a${i - 1}, a${i - 1}];`);
  }
  lines.push('const t = { kind: "tool", name: "t", d: a9, run: () => 1 };');
  const names: string[] = [];
  while (lines.join("\n").length + names.join(", ").length < 16_000) {
    names.push(`t as e${names.length}`);
  }
  lines.push(`export { ${names.join(", ")} };`);
  const url = new URL("./static.ts", import.meta.url).href;
  const script = `import { describeStatically } from ${JSON.stringify(url)};
    const got = await describeStatically("/a.ts", Deno.args[0],
      { maxResultBytes: 1 << 20 });
    console.log(JSON.stringify(got));`;
  // In a process of its own, with a heap the copies cannot fit in.
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      "--quiet",
      "--v8-flags=--max-old-space-size=160",
      script,
      lines.join("\n"),
    ],
    stdout: "piped",
    stderr: "null",
    signal: AbortSignal.timeout(60_000),
  }).output();
  assert.equal(out.code, 0, "ran out of its heap copying the definition");
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "null");
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

// Local helpers a module imports, and modules importing them.
const HELPERS: Record<string, string> = {
  "h_pure.ts": `import type { X } from "./nowhere.ts";
    export function withSummary(d: X) { return d; }
    export const SCHEMA = { type: "object", required: ["a"] };
    const hidden = ["x", "y"].join("+");
    export { hidden as "odd name" };
    export default { kind: "tool", name: "from helper" };`,
  "h_chain.ts": `import { SCHEMA } from "./h_pure.ts";
    export const WRAPPED = { inner: SCHEMA };
    export function f() {}`,
  "h_code.ts": `export const X = [1].map(String);`,
  "h_cycle_a.ts": `import { b } from "./h_cycle_b.ts"; export const a = 1;`,
  "h_cycle_b.ts": `import { a } from "./h_cycle_a.ts"; export const b = 2;`,
};
const IMPORTING_LITERAL: Record<string, string> = {
  "i_named.ts": `import { withSummary, SCHEMA } from "./h_pure.ts";
    export default { kind: "tool", name: "i1", input: SCHEMA,
      run: (a: unknown) => withSummary(a) };`,
  "i_default.ts": `import helper, * as ns from "./h_pure.ts";
    import { WRAPPED } from "./h_chain.ts";
    export { helper as kit };
    export default { kind: "tool", name: "i2", w: WRAPPED, run: () => ns };`,
  "i_bare.ts": `import "./h_pure.ts";
    export default { kind: "tool", name: "i3" };`,
};
const IMPORTING_DYNAMIC: Record<string, string> = {
  "d_code.ts": `import { X } from "./h_code.ts";
    export default { kind: "tool", name: "d1" };`,
  "d_missing_name.ts": `import { nope } from "./h_pure.ts";
    export default { kind: "tool", name: "d2" };`,
  "d_cycle.ts": `import { a } from "./h_cycle_a.ts";
    export default { kind: "tool", name: "d3" };`,
  "d_namespace_value.ts": `import * as ns from "./h_pure.ts";
    export default { kind: "tool", name: "d4", ns };`,
  "d_missing_file.ts": `import { a } from "./missing.ts";
    export default { kind: "tool", name: "d5" };`,
  "d_only_types.ts": `import { type X } from "./h_pure.ts";
    export default { kind: "tool", name: "d6" };`,
  "d_npm.ts": `import { z } from "npm:zod@4.6.7";
    export default { kind: "tool", name: "d7" };`,
};

Deno.test("the static path follows local imports of literal modules, as a worker loads them", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const all = { ...HELPERS, ...IMPORTING_LITERAL, ...IMPORTING_DYNAMIC };
    for (const [name, source] of Object.entries(all)) {
      await Deno.writeTextFile(join(dir, name), source);
    }
    const names = Object.keys(IMPORTING_LITERAL);
    const paths = names.map((name) => join(dir, name));
    const report = await workerAnswers(
      paths.map((path) => ({ path, read: [dir] })),
      dir,
    );
    const statically = async (path: string) => {
      const graph = await moduleGraph(path);
      return await describeStatically(path, graph.sources.get(path)!, {
        ...LIMIT,
        imports: graph.sources,
      });
    };
    for (const [i, name] of names.entries()) {
      const worker = report.answers.get(i);
      assert.ok(
        worker?.ok,
        `${name}: the worker failed: ${JSON.stringify(worker)}`,
      );
      const literal = await statically(paths[i]!);
      assert.notEqual(literal, null, `${name}: not answered statically`);
      assert.equal(JSON.stringify(literal), JSON.stringify(worker.value), name);
    }
    for (const name of Object.keys(IMPORTING_DYNAMIC)) {
      assert.equal(await statically(join(dir, name)), null, name);
    }
    // Without the imported files' text, nothing is assumed about them.
    const alone = join(dir, "i_named.ts");
    assert.equal(
      await describeStatically(alone, all["i_named.ts"]!, LIMIT),
      null,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the static path agrees with workers on the shipped skills", async () => {
  const root = new URL("../../skills/", import.meta.url).pathname;
  const paths: string[] = [];
  for await (const dir of Deno.readDir(root)) {
    if (!dir.isDirectory) continue;
    for await (const entry of Deno.readDir(join(root, dir.name))) {
      const name = entry.name;
      if (name.startsWith("_") || name.endsWith("_test.ts")) continue;
      if (name.endsWith(".ts")) paths.push(join(root, dir.name, name));
    }
  }
  paths.sort();
  const graphs = await Promise.all(paths.map((path) => moduleGraph(path)));
  const report = await workerAnswers(
    paths.map((path, i) => ({ path, read: graphs[i]!.files })),
    root,
  );
  let read = 0;
  for (const [i, path] of paths.entries()) {
    const sources = graphs[i]!.sources;
    const literal = await describeStatically(path, sources.get(path)!, {
      ...LIMIT,
      imports: sources,
    });
    if (literal === null) continue;
    read++;
    const worker = report.answers.get(i);
    assert.ok(worker?.ok, `${path}: ${JSON.stringify(worker)}`);
    assert.equal(JSON.stringify(literal), JSON.stringify(worker.value), path);
  }
  // The toolkits and several tools are read statically (8 of 15 today).
  assert.ok(read >= 5, `only ${read} shipped modules read statically`);
});
