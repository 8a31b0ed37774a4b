import assert from "node:assert/strict";
import { join } from "node:path";
import {
  MAX_MODULE_FILE_BYTES,
  MAX_MODULE_GRAPH_FILES,
  moduleGraph,
} from "./module_graph.ts";

// Runs a test in a fresh folder (its real path), removed afterwards.
async function inTempDir(test: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    await test(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

// The files of main.ts's graph, relative to a folder holding `files`.
async function graphOf(files: Record<string, string>): Promise<string[]> {
  let names: string[] = [];
  await inTempDir(async (dir) => {
    for (const [name, text] of Object.entries(files)) {
      await Deno.writeTextFile(join(dir, name), text);
    }
    const graph = await moduleGraph(join(dir, "main.ts"));
    names = graph.files.map((f) => f.slice(dir.length + 1));
  });
  return names;
}

// The files of a module's graph, or its error's message, read in a process
// of its own after `prelude`: on failure it never ends, and is killed.
async function graphInProcess(
  main: string,
  prelude = "",
): Promise<string[] | string> {
  const script = `import { moduleGraph } from ${
    JSON.stringify(new URL("./module_graph.ts", import.meta.url).href)
  };
    ${prelude}
    try {
      console.log(JSON.stringify((await moduleGraph(Deno.args[0])).files));
    } catch (err) {
      console.log(JSON.stringify(err.message));
    }`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", script, main],
    stdout: "piped",
    stderr: "inherit",
    signal: AbortSignal.timeout(10_000),
  }).output();
  assert.equal(out.code, 0, "still reading after 10 s");
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

Deno.test("moduleGraph follows imports whose binding names are string literals", async () => {
  const files = await graphOf({
    "main.ts": [
      'import { "quoted name" as x } from "./a.ts";',
      "import { 'single quoted' as y, plain } from './b.ts';",
      'export { "re export" as z } from "./c.ts";',
      'export { w as "exported name" } from "./d.ts";',
      // A literal that reads like the keyword must not end the clause early.
      'import { "from" as f } from "./e.ts";',
      "console.log(x, y, plain, f);",
    ].join("\n"),
    "a.ts": 'const v = 1; export { v as "quoted name" };',
    "b.ts": 'const v = 1; export { v as "single quoted", v as plain };',
    "c.ts": 'const v = 1; export { v as "re export" };',
    "d.ts": "export const w = 1;",
    "e.ts": 'const v = 1; export { v as "from" };',
  });
  assert.deepEqual(files, ["a.ts", "b.ts", "c.ts", "d.ts", "e.ts", "main.ts"]);
});

Deno.test("moduleGraph still leaves out type-only imports and non-local specifiers", async () => {
  const files = await graphOf({
    "main.ts": [
      'import type { "quoted" as T } from "./types.ts";',
      'import { "x" as x } from "npm:zod@4.6.7";',
      'import { a } from "./a.ts";',
      "console.log(x, a);",
    ].join("\n"),
    "types.ts": "export type T = 1;",
    "a.ts": "export const a = 1;",
  });
  assert.deepEqual(files, ["a.ts", "main.ts"]);
});

Deno.test("moduleGraph reads no device, pipe or oversized file a module imports", async () => {
  // The host reads what a dropped-in module imports: `import "/dev/zero"`
  // filled its memory at about 450 MiB/s, a FIFO held the read for ever.
  await inTempDir(async (dir) => {
    const fifo = join(dir, "pipe.ts");
    await new Deno.Command("mkfifo", { args: [fifo] }).output();
    await Deno.writeTextFile(
      join(dir, "main.ts"),
      'import "/dev/zero";\nimport "./pipe.ts";\nimport "./big.ts";\n',
    );
    const big = await Deno.open(join(dir, "big.ts"), {
      create: true,
      write: true,
    });
    await big.truncate(MAX_MODULE_FILE_BYTES + 1);
    big.close();
    assert.equal(
      await graphInProcess(join(dir, "main.ts")),
      `File "${
        join(dir, "big.ts")
      }" is larger than ${MAX_MODULE_FILE_BYTES} bytes`,
    );
    await Deno.remove(join(dir, "big.ts"));
    const graph = await moduleGraph(join(dir, "main.ts"));
    assert.deepEqual(graph.files, [join(dir, "main.ts")]);
  });
});

Deno.test("moduleGraph reads a file of many unfinished imports in linear time", async () => {
  // Each `import` used to scan on to the end of the file for its `from`:
  // 180 KB of `import x ` held the host's thread for 59 s.
  await inTempDir(async (dir) => {
    const main = join(dir, "main.ts");
    await Deno.writeTextFile(
      main,
      'import { a } from "./a.ts";\n' + "import x export y ".repeat(20_000),
    );
    await Deno.writeTextFile(join(dir, "a.ts"), "export const a = 1;");
    assert.deepEqual(await graphInProcess(main), [join(dir, "a.ts"), main]);
  });
});

Deno.test("moduleGraph does not wait on a file swapped to a FIFO after its stat", async () => {
  // A module's import renamed over by a FIFO between the stat and the open
  // held the open (a thread and one of discovery's I/O slots) for ever.
  // The swap is played by a stat that still sees the regular file.
  await inTempDir(async (dir) => {
    await new Deno.Command("mkfifo", { args: [join(dir, "b.ts")] }).output();
    const main = join(dir, "main.ts");
    await Deno.writeTextFile(main, 'import "./b.ts";\n');
    const fakeStat = `const stat = Deno.stat;
      Deno.stat = async (path) => ({ ...(await stat(path)), isFile: true });`;
    assert.deepEqual(await graphInProcess(main, fakeStat), [main]);
  });
});

Deno.test("moduleGraph throws NotFound for a module removed after its stat", async () => {
  // The removal is played by a stat that still sees a regular file.
  await inTempDir(async (dir) => {
    const stat = Deno.stat;
    Deno.stat = async () => ({ ...(await stat(dir)), isFile: true });
    try {
      await assert.rejects(
        moduleGraph(join(dir, "gone.ts")),
        Deno.errors.NotFound,
      );
    } finally {
      Deno.stat = stat;
    }
  });
});

Deno.test("moduleGraph refuses a module whose imports exceed the bound in all", async () => {
  // Each file under the bound, the graph over it: every file was read and
  // held in the host's memory (and its one thread) whatever their number.
  await inTempDir(async (dir) => {
    const half = "x".repeat(MAX_MODULE_FILE_BYTES / 2);
    await Deno.writeTextFile(join(dir, "a.ts"), half);
    await Deno.writeTextFile(join(dir, "b.ts"), half);
    const main = join(dir, "main.ts");
    await Deno.writeTextFile(main, 'import "./a.ts";\nimport "./b.ts";\n');
    await assert.rejects(moduleGraph(main), {
      name: "RangeError",
      message:
        `Module "${main}" and its imports are larger than ${MAX_MODULE_FILE_BYTES} bytes in all`,
    });
  });
});

Deno.test("moduleGraph refuses a module importing more files than the bound", async () => {
  // Each import costs a stat, found or not: 100,000 imports of missing
  // files in 2 MB kept one module's read going for 27 s, past the bytes
  // bound (a missing file has none).
  await inTempDir(async (dir) => {
    const main = join(dir, "main.ts");
    const imports = Array.from(
      { length: MAX_MODULE_GRAPH_FILES - 1 },
      (_, i) => `import "./m${i}.ts";\n`,
    );
    await Deno.writeTextFile(main, imports.join(""));
    const stat = Deno.stat;
    let stats = 0;
    Deno.stat = (path) => (stats++, stat(path));
    try {
      // The module and its imports at the bound: read, as before.
      assert.deepEqual((await moduleGraph(main)).files, [main]);
      assert.equal(stats, MAX_MODULE_GRAPH_FILES);
      await Deno.writeTextFile(main, 'import "./one_more.ts";\n', {
        append: true,
      });
      stats = 0;
      await assert.rejects(moduleGraph(main), {
        name: "RangeError",
        message:
          `Module "${main}" and its imports are more than ${MAX_MODULE_GRAPH_FILES} files`,
      });
      assert.ok(stats <= MAX_MODULE_GRAPH_FILES, `${stats} stats`);
    } finally {
      Deno.stat = stat;
    }
  });
});
