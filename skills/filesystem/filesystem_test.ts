import assert from "node:assert/strict";
import { constants, open } from "node:fs/promises";
import { dataOf, makeCtx } from "../../tests/support/skill_ctx.ts";
import { compileGlob, MAX_WALK_ENTRIES } from "./_walk.ts";
import findFiles from "./find_files.ts";
import grep from "./grep.ts";
import listDir from "./list_dir.ts";
import readFile from "./read_file.ts";
import stat from "./stat.ts";
import writeFile from "./write_file.ts";

/** A temp tree: root/ with files, plus a sibling "outside" dir. */
async function fixture(): Promise<{ base: string; root: string }> {
  const base = await Deno.makeTempDir({ prefix: "skillbox_fs_" });
  const root = `${base}/root`;
  await Deno.mkdir(`${root}/src/lib`, { recursive: true });
  await Deno.mkdir(`${root}/.hidden`);
  await Deno.mkdir(`${base}/outside`);
  await Deno.writeTextFile(`${base}/outside/secret.txt`, "TOP SECRET\n");
  await Deno.writeTextFile(`${root}/a.txt`, "one\ntwo\nthree\nfour\nfive\n");
  await Deno.writeTextFile(
    `${root}/src/main.ts`,
    'import { x } from "./lib/util.ts";\n// TODO: tidy\nconsole.log(x);\n',
  );
  await Deno.writeTextFile(
    `${root}/src/lib/util.ts`,
    "export const x = 1;\n// todo later\n",
  );
  await Deno.writeTextFile(`${root}/src/lib/data.json`, '{"todo": true}\n');
  await Deno.writeTextFile(`${root}/.hidden/conf.ts`, "// TODO hidden\n");
  await Deno.writeFile(
    `${root}/blob.bin`,
    new Uint8Array([84, 79, 68, 79, 0, 1, 2]),
  );
  await Deno.symlink(`${base}/outside/secret.txt`, `${root}/escape.txt`);
  await Deno.symlink(`${base}/outside`, `${root}/escape_dir`);
  await Deno.symlink(`${root}/a.txt`, `${root}/inside_link.txt`);
  return { base, root };
}

Deno.test("filesystem tools", async (t) => {
  const { base, root } = await fixture();
  const ro = makeCtx({ root }).ctx;
  const rw = makeCtx({ root, writable: true }).ctx;

  await t.step("read_file reads a whole file and a line range", async () => {
    const all = dataOf(await readFile.run({ path: "a.txt" }, ro));
    assert.equal(all.content, "one\ntwo\nthree\nfour\nfive\n");
    assert.equal(all.total_lines, 5);
    assert.equal(all.truncated, false);
    const part = dataOf(
      await readFile.run(
        { path: "a.txt", start_line: 2, end_line: 3, line_numbers: true },
        ro,
      ),
    );
    assert.equal(part.content, "2\ttwo\n3\tthree\n");
    assert.equal(part.end_line, 3);
  });

  await t.step("read_file caps output and says where to go on", async () => {
    const big = Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`);
    await Deno.writeTextFile(`${root}/big.txt`, big.join("\n") + "\n");
    const r = dataOf(
      await readFile.run({ path: "big.txt", max_bytes: 100 }, ro),
    );
    assert.equal(r.truncated, true);
    assert.ok((r.content as string).length <= 100);
    assert.equal(r.total_lines, null);
    const next = r.next_start_line as number;
    const more = dataOf(
      await readFile.run(
        { path: "big.txt", start_line: next, end_line: next },
        ro,
      ),
    );
    assert.equal(more.content, `line ${next}\n`);
  });

  await t.step(
    "read_file stops reading a line longer than its cap",
    async () => {
      // A FIFO shows how much the tool reads: the writer offers far more than
      // the cap, with no newline, and learns the reader left (BrokenPipe).
      // Buffering a whole line before cutting it would read all of it.
      const fifo = `${root}/endless`;
      await new Deno.Command("mkfifo", { args: [fifo] }).output();
      const offered = 8 << 20;
      const writer = (async () => {
        const w = await Deno.open(fifo, { write: true });
        const chunk = new Uint8Array(1 << 16).fill(97);
        let written = 0;
        try {
          while (written < offered) written += await w.write(chunk);
        } catch (err) {
          if (!(err instanceof Deno.errors.BrokenPipe)) throw err;
        } finally {
          w.close();
        }
        return written;
      })();
      const r = dataOf(
        await readFile.run({ path: "endless", max_bytes: 1000 }, ro),
      );
      assert.equal(r.content, "a".repeat(1000) + "\n");
      assert.equal(r.truncated, true);
      assert.ok((await writer) < offered);
      await Deno.remove(fifo);
      // Cut at a character's end: a U+FFFD the file holds is kept, a
      // character that does not fit whole is dropped.
      await Deno.writeTextFile(
        `${root}/replacement.txt`,
        "a".repeat(997) + "\uFFFD" + "é".repeat(10) + "\n",
      );
      const kept = dataOf(
        await readFile.run({ path: "replacement.txt", max_bytes: 1000 }, ro),
      );
      assert.equal(kept.content, "a".repeat(997) + "\uFFFD\n");
      // A long line before start_line is skipped whole, and counted once,
      // also when it spans many reads.
      await Deno.writeTextFile(`${root}/long.txt`, "a".repeat(1e6) + "\nb\n");
      const second = dataOf(
        await readFile.run(
          { path: "long.txt", start_line: 2, max_bytes: 10 },
          ro,
        ),
      );
      assert.equal(second.content, "b\n");
      assert.equal(second.total_lines, 2);
    },
  );

  await t.step("read_file does not wait for a FIFO's writer", async () => {
    const fifo = `${root}/lonely`;
    await new Deno.Command("mkfifo", { args: [fifo] }).output();
    const read = Promise.resolve(readFile.run({ path: "lonely" }, ro))
      .catch((err: Error) => err);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), 5_000);
    });
    const first = await Promise.race([read, late]);
    clearTimeout(timer);
    if (first === "late") {
      // Release the blocked open so the test can end, then fail.
      const w = await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      await w.close();
      await read;
    }
    await Deno.remove(fifo);
    assert.notEqual(first, "late", "read_file waited for a writer");
    assert.match(String(first), /"lonely" is a FIFO that nothing writes to/);
  });

  await t.step("read_file refuses binary files and directories", async () => {
    await assert.rejects(
      () => Promise.resolve(readFile.run({ path: "blob.bin" }, ro)),
      /binary/,
    );
    await assert.rejects(
      () => Promise.resolve(readFile.run({ path: "src" }, ro)),
      /is a directory/,
    );
  });

  await t.step("paths cannot leave root with ..", async () => {
    for (
      const path of [
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        `${base}/outside/secret.txt`,
        "/etc/passwd",
      ]
    ) {
      await assert.rejects(
        () => Promise.resolve(readFile.run({ path }, ro)),
        /outside the root/,
        path,
      );
    }
    // Climbing out and back in is refused too: the rule has no exceptions.
    await assert.rejects(
      () => Promise.resolve(readFile.run({ path: "../root/a.txt" }, ro)),
      /outside the root/,
    );
    // An absolute path inside root is fine.
    const r = dataOf(await readFile.run({ path: `${root}/a.txt` }, ro));
    assert.equal(r.path, "a.txt");
  });

  await t.step("symlinks cannot leave root", async () => {
    await assert.rejects(
      () => Promise.resolve(readFile.run({ path: "escape.txt" }, ro)),
      /through a symlink/,
    );
    await assert.rejects(
      () =>
        Promise.resolve(readFile.run({ path: "escape_dir/secret.txt" }, ro)),
      /through a symlink/,
    );
    await assert.rejects(
      () => Promise.resolve(listDir.run({ path: "escape_dir" }, ro)),
      /through a symlink/,
    );
    await assert.rejects(
      () =>
        Promise.resolve(
          writeFile.run({ path: "escape_dir/new.txt", content: "x" }, rw),
        ),
      /through a symlink/,
    );
    // A link that stays inside root works.
    const r = dataOf(await readFile.run({ path: "inside_link.txt" }, ro));
    assert.match(r.content as string, /^one/);
    // grep follows inside links but never the escaping one.
    const g = dataOf(
      await grep.run({ pattern: "SECRET", include_hidden: true }, ro),
    );
    assert.deepEqual(g.matches, []);
  });

  await t.step("a dangling symlink is not written through", async () => {
    await Deno.symlink(`${base}/outside/planted.txt`, `${root}/dangling.txt`);
    await assert.rejects(
      () =>
        Promise.resolve(
          writeFile.run({ path: "dangling.txt", content: "x" }, rw),
        ),
      /dangling symlink/,
    );
    await assert.rejects(() => Deno.stat(`${base}/outside/planted.txt`));
    const s = dataOf(await stat.run({ path: "dangling.txt" }, ro));
    assert.equal(s.dangling, true);
    await Deno.remove(`${root}/dangling.txt`);
  });

  await t.step("write_file needs writable and creates parents", async () => {
    await assert.rejects(
      () => Promise.resolve(writeFile.run({ path: "n.txt", content: "x" }, ro)),
      /read-only/,
    );
    const w = dataOf(
      await writeFile.run({ path: "new/deep/n.txt", content: "hello\n" }, rw),
    );
    assert.equal(w.created, true);
    assert.equal(w.bytes_written, 6);
    await writeFile.run(
      { path: "new/deep/n.txt", content: "more\n", mode: "append" },
      rw,
    );
    assert.equal(
      await Deno.readTextFile(`${root}/new/deep/n.txt`),
      "hello\nmore\n",
    );
    await assert.rejects(
      () =>
        Promise.resolve(
          writeFile.run(
            { path: "new/deep/n.txt", content: "x", mode: "create" },
            rw,
          ),
        ),
      /already exists/,
    );
    await writeFile.run({ path: "new/deep/n.txt", content: "replaced" }, rw);
    assert.equal(await Deno.readTextFile(`${root}/new/deep/n.txt`), "replaced");
    await assert.rejects(
      () =>
        Promise.resolve(
          writeFile.run({ path: "../outside/x.txt", content: "x" }, rw),
        ),
      /outside the root/,
    );
    await Deno.remove(`${root}/new`, { recursive: true });
  });

  await t.step("a write that fails part-way leaves no temp file", async () => {
    // As a full disk would: the temporary file exists, half written, when
    // the write throws.
    const writeFileAsIs = Deno.writeFile;
    Deno.writeFile = async (path, data, options) => {
      const half = (data as Uint8Array).subarray(0, 2);
      await writeFileAsIs(path, half, options);
      throw new Error("No space left on device (os error 28)");
    };
    await Deno.mkdir(`${root}/full`);
    try {
      await assert.rejects(
        () =>
          Promise.resolve(
            writeFile.run({ path: "full/n.txt", content: "hello" }, rw),
          ),
        /No space left/,
      );
    } finally {
      Deno.writeFile = writeFileAsIs;
    }
    const left = await Array.fromAsync(Deno.readDir(`${root}/full`));
    assert.deepEqual(left.map((e) => e.name), []);
    await Deno.remove(`${root}/full`);
  });

  await t.step("list_dir lists entries with types and sizes", async () => {
    const r = dataOf<
      { entries: { path: string; type: string; size?: number }[] }
    >(
      await listDir.run({}, ro),
    );
    const byPath = Object.fromEntries(r.entries.map((e) => [e.path, e]));
    assert.equal(byPath["a.txt"]?.type, "file");
    assert.equal(byPath["a.txt"]?.size, 24);
    assert.equal(byPath["src"]?.type, "dir");
    assert.equal(byPath["escape_dir"]?.type, "symlink");
    assert.ok(byPath[".hidden"], "hidden entries listed by default");
    assert.ok(!byPath["src/main.ts"], "not recursive by default");

    const deep = dataOf<{ entries: { path: string }[] }>(
      await listDir.run({ path: "src", recursive: true }, ro),
    );
    assert.deepEqual(deep.entries.map((e) => e.path), [
      "src/lib",
      "src/lib/data.json",
      "src/lib/util.ts",
      "src/main.ts",
    ]);
    const shallow = dataOf<{ entries: unknown[]; truncated: boolean }>(
      await listDir.run({ recursive: true, max_entries: 2 }, ro),
    );
    assert.equal(shallow.entries.length, 2);
    assert.equal(shallow.truncated, true);
  });

  await t.step("find_files matches globs", async () => {
    const find = async (args: Record<string, unknown>) =>
      dataOf<{ paths: string[] }>(
        await findFiles.run(args as { pattern: string }, ro),
      ).paths;
    assert.deepEqual(await find({ pattern: "**/*.ts" }), [
      "src/lib/util.ts",
      "src/main.ts",
    ]);
    assert.deepEqual(await find({ pattern: "*.ts" }), [
      "src/lib/util.ts",
      "src/main.ts",
    ]);
    assert.deepEqual(await find({ pattern: "src/*.ts" }), ["src/main.ts"]);
    assert.deepEqual(await find({ pattern: "src/**/*.{json,ts}" }), [
      "src/lib/data.json",
      "src/lib/util.ts",
      "src/main.ts",
    ]);
    assert.deepEqual(await find({ pattern: "*.ts", path: "src/lib" }), [
      "src/lib/util.ts",
    ]);
    assert.deepEqual(await find({ pattern: "**/*.ts", include_hidden: true }), [
      ".hidden/conf.ts",
      "src/lib/util.ts",
      "src/main.ts",
    ]);
    assert.deepEqual(await find({ pattern: ".hidden/*" }), [".hidden/conf.ts"]);
    assert.deepEqual(await find({ pattern: "**/lib", type: "dir" }), [
      "src/lib",
    ]);
    assert.deepEqual(await find({ pattern: "?.txt" }), ["a.txt"]);
  });

  await t.step("compileGlob handles the syntax", () => {
    const m = (g: string, p: string) => compileGlob(g).test(p);
    assert.ok(m("**/*.ts", "a.ts"));
    assert.ok(m("**/*.ts", "a/b/c.ts"));
    assert.ok(!m("**/*.ts", "a/b/c.tsx"));
    assert.ok(m("src/**", "src/a/b"));
    assert.ok(!m("src/*", "src/a/b"));
    assert.ok(m("a/**/b", "a/b"));
    assert.ok(m("a/**/b", "a/x/y/b"));
    assert.ok(m("[!a]*.md", "README.md"));
    assert.ok(!m("[!a]*.md", "about.md"));
    assert.ok(m("file.(1).txt", "file.(1).txt"));
    assert.ok(!m("file.txt", "fileXtxt"));
    assert.ok(m("*.{a,b{c,d}}", "x.bd"));
    assert.throws(() => compileGlob("*.{a,b"), SyntaxError);
  });

  await t.step("compileGlob matches many stars in linear time", () => {
    // A backtracking RegExp took seconds for 6 stars and 40 characters,
    // and did not finish in a minute for 9 stars and 60.
    // The work, counted first (a backtracking matcher fails here rather
    // than hang below): a `[a]` class is tested by a RegExp, so its tests
    // are the steps. The path is read one character at a time, and each of
    // the 9 class states is tried at most once per character (a
    // backtracking matcher tries it on every way to split the path).
    const glob = compileGlob("*[a]".repeat(9) + "*b");
    const steps = (n: number) => {
      let count = 0;
      const test = RegExp.prototype.test;
      RegExp.prototype.test = function (this: RegExp, s: string) {
        if (++count > 100 * n) throw new Error(`over ${100 * n} steps`);
        return test.call(this, s);
      };
      try {
        assert.ok(!glob.test("a".repeat(n)));
      } finally {
        RegExp.prototype.test = test;
      }
      return count;
    };
    for (const n of [30, 120]) {
      const count = steps(n);
      assert.ok(count >= n && count <= 9 * n, `${count} steps for ${n}`);
    }
    assert.ok(!compileGlob("*a".repeat(6) + "*b").test("a".repeat(40)));
    assert.ok(!compileGlob("*a".repeat(9) + "*b").test("a".repeat(60)));
    assert.ok(compileGlob("*a".repeat(9) + "*b").test("a".repeat(60) + "b"));
    // However many stars, and as long as a glob may be.
    assert.ok(!compileGlob("*".repeat(4095) + "b").test("a".repeat(200)));
    assert.throws(() => compileGlob("*".repeat(4097)), RangeError);
  });

  await t.step("grep finds lines with context and skips binary", async () => {
    const r = dataOf<{
      matches: {
        path: string;
        line: number;
        text: string;
        before?: string[];
        after?: string[];
      }[];
      skipped_binary: number;
    }>(await grep.run({ pattern: "todo", ignore_case: true, context: 1 }, ro));
    assert.deepEqual(r.matches.map((m) => `${m.path}:${m.line}`), [
      "src/lib/data.json:1",
      "src/lib/util.ts:2",
      "src/main.ts:2",
    ]);
    const main = r.matches[2]!;
    assert.deepEqual(main.before, ['import { x } from "./lib/util.ts";']);
    assert.deepEqual(main.after, ["console.log(x);"]);
    assert.equal(r.skipped_binary, 1);

    const scoped = dataOf<{ matches: { path: string }[] }>(
      await grep.run(
        { pattern: "TODO", glob: "*.ts", include_hidden: true },
        ro,
      ),
    );
    assert.deepEqual(scoped.matches.map((m) => m.path), [
      ".hidden/conf.ts",
      "src/main.ts",
    ]);
    const capped = dataOf<{ matches: unknown[]; truncated: boolean }>(
      await grep.run({ pattern: "line", path: "big.txt", max_matches: 3 }, ro),
    );
    assert.equal(capped.matches.length, 3);
    assert.equal(capped.truncated, true);
    const fixed = dataOf<{ matches: unknown[] }>(
      await grep.run({ pattern: "x);", fixed_strings: true }, ro),
    );
    assert.equal(fixed.matches.length, 1);
    await assert.rejects(
      () => Promise.resolve(grep.run({ pattern: "(" }, ro)),
      /Invalid regular expression/,
    );
  });

  await t.step(
    "grep reads no more than its cap whatever stat says",
    async () => {
      // A file that stat reports small and that reads large: a log that
      // grows between the look and the read, or a /proc file (size 0).
      // Every stat here, by path or on an open handle, says 20 bytes.
      await Deno.mkdir(`${root}/logs`);
      const grown = `${root}/logs/grown.log`;
      await Deno.writeTextFile(grown, "needle\n".repeat(1_600_000));
      const restore = await statsSay(20);
      try {
        const r = dataOf<{ matches: unknown[]; files_searched: number }>(
          await grep.run({ pattern: "needle", path: "logs" }, ro),
        );
        assert.deepEqual(r.matches, []);
        assert.equal(r.files_searched, 0);
      } finally {
        restore();
      }
      // read_file reads a bounded head of it; what it says of the file
      // (its size) is the open file's, not what a stat by path said.
      const pathsOnly = await statsSay(20, { handles: false });
      try {
        const head = dataOf(
          await readFile.run({ path: "logs/grown.log", end_line: 1 }, ro),
        );
        assert.equal(head.content, "needle\n");
        assert.equal(head.size, 7 * 1_600_000);
      } finally {
        pathsOnly();
        await Deno.remove(`${root}/logs`, { recursive: true });
      }
    },
  );

  // A folder of `n` entries, without making them; whether grep and
  // find_files say they stopped short (the glob matches none: nothing is
  // opened).
  async function truncatedAt(n: number): Promise<boolean[]> {
    const crowded = `${root}/crowded`;
    await Deno.mkdir(crowded);
    const readDir = Deno.readDir;
    Deno.readDir = (path) =>
      path !== crowded ? readDir(path) : (async function* () {
        for (let i = 0; i < n; i++) {
          yield {
            name: `f${i}`,
            isFile: true,
            isDirectory: false,
            isSymlink: false,
          };
        }
      })();
    try {
      const g = dataOf<{ truncated: boolean }>(
        await grep.run({ pattern: "x", path: "crowded", glob: "*.none" }, ro),
      );
      const f = dataOf<{ truncated: boolean }>(
        await findFiles.run({ pattern: "*.none", path: "crowded" }, ro),
      );
      return [g.truncated, f.truncated];
    } finally {
      Deno.readDir = readDir;
      await Deno.remove(crowded);
    }
  }

  await t.step(
    "grep and find_files stopped at the walk's bound say so",
    async () => {
      assert.deepEqual(await truncatedAt(MAX_WALK_ENTRIES + 1), [true, true]);
    },
  );

  await t.step(
    "a walk of exactly its bound is whole, not truncated",
    async () => {
      assert.deepEqual(await truncatedAt(MAX_WALK_ENTRIES), [false, false]);
    },
  );

  await t.step("grep skips a FIFO without waiting for a writer", async () => {
    await Deno.mkdir(`${root}/pipes`);
    const fifo = `${root}/pipes/fifo`;
    await new Deno.Command("mkfifo", { args: [fifo] }).output();
    await Deno.symlink(fifo, `${root}/pipes/link`);
    try {
      for (const path of ["pipes", "pipes/fifo"]) {
        const r = dataOf<{ files_searched: number }>(
          await bounded(grep.run({ pattern: "x", path }, ro), path),
        );
        assert.equal(r.files_searched, 0);
      }
    } finally {
      // Should an open be waiting for a writer, this lets it go.
      await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK)
        .then((h) => h.close(), () => {});
      await Deno.remove(`${root}/pipes`, { recursive: true });
    }
  });

  await t.step("stat reports existence and type", async () => {
    const f = dataOf(await stat.run({ path: "a.txt" }, ro));
    assert.equal(f.exists, true);
    assert.equal(f.type, "file");
    assert.equal(f.size, 24);
    assert.equal(typeof f.modified, "string");
    const missing = dataOf(await stat.run({ path: "nope.txt" }, ro));
    assert.equal(missing.exists, false);
    const link = dataOf(await stat.run({ path: "inside_link.txt" }, ro));
    assert.equal(link.type, "symlink");
    assert.equal(link.symlink_target, `${root}/a.txt`);
  });

  await t.step('the root is named ".", paths under it from it', async () => {
    const top = dataOf(await stat.run({ path: root }, ro));
    assert.equal(top.path, ".");
    assert.equal(top.type, "dir");
    const listed = dataOf<{ path: string; entries: { path: string }[] }>(
      await listDir.run({ path: `${root}/src` }, ro),
    );
    assert.equal(listed.path, "src");
    assert.ok(listed.entries.some((e) => e.path === "src/main.ts"));
    await assert.rejects(
      () => Promise.resolve(writeFile.run({ path: ".", content: "x" }, rw)),
      /Cannot write to the root directory/,
    );
  });

  await t.step("an unconfigured toolkit says so", async () => {
    await assert.rejects(
      () => Promise.resolve(readFile.run({ path: "a.txt" }, makeCtx().ctx)),
      /not configured/,
    );
  });

  await Deno.remove(base, { recursive: true });
});

/**
 * Makes every stat of a regular file, by path (`Deno.stat`, `Deno.lstat`)
 * and, unless `handles` is false, on an open handle (`Deno.FsFile`,
 * `node:fs` FileHandle), report `size` bytes, until the returned function
 * restores them.
 */
async function statsSay(
  size: number,
  { handles = true } = {},
): Promise<() => void> {
  type StatFn = (this: unknown, ...args: unknown[]) => Promise<unknown>;
  const handle = await open(import.meta.filename!);
  const handleProto = Object.getPrototypeOf(handle) as { stat: StatFn };
  await handle.close();
  const handleStat = handleProto.stat;
  const stat = Deno.stat;
  const lstat = Deno.lstat;
  const fsFileStat = Deno.FsFile.prototype.stat;
  const small = (info: Deno.FileInfo) => info.isFile ? { ...info, size } : info;
  Deno.stat = async (path) => small(await stat(path));
  Deno.lstat = async (path) => small(await lstat(path));
  if (!handles) {
    return () => {
      Deno.stat = stat;
      Deno.lstat = lstat;
    };
  }
  Deno.FsFile.prototype.stat = async function () {
    return small(await fsFileStat.call(this));
  };
  handleProto.stat = async function (...args) {
    const st = await handleStat.apply(this, args) as {
      isFile(): boolean;
      size: number;
    };
    if (st.isFile()) st.size = size;
    return st;
  };
  return () => {
    Deno.stat = stat;
    Deno.lstat = lstat;
    Deno.FsFile.prototype.stat = fsFileStat;
    handleProto.stat = handleStat;
  };
}

/** The promise's value, or a failure if it has not settled within 10 s. */
async function bounded<T>(promise: T | Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`"${what}" still waits after 10 s`)),
      10_000,
    );
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}
