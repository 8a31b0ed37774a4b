import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createFakeSandbox,
  fakeModule,
} from "../../tests/fixtures/tools/fake_sandbox.ts";
import { loadRegistry, progressLogger, type Registry } from "./registry.ts";
import type { RegistryChange } from "./types.ts";

const tool = (name: string, fields: Record<string, unknown> = {}) =>
  fakeModule([{
    kind: "tool",
    name,
    fields: { description: name, ...fields },
  }]);

// Resolves with the first change that satisfies `ok`, or rejects after
// `ms`: the bound that keeps a missed event from hanging the suite.
function nextChange(
  registry: Registry,
  ok: (change: RegistryChange) => boolean,
  ms = 3000,
): Promise<RegistryChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`No matching change within ${ms} ms`));
    }, ms);
    const off = registry.onChange((change) => {
      if (!ok(change)) return;
      clearTimeout(timer);
      off();
      resolve(change);
    });
  });
}

Deno.test("loadRegistry() loads good files and reports a broken one", async () => {
  const dir = await Deno.makeTempDir();
  const sandbox = createFakeSandbox();
  try {
    await Deno.writeTextFile(join(dir, "a.ts"), tool("alpha"));
    await Deno.writeTextFile(join(dir, "b.ts"), "{not json");
    await Deno.mkdir(join(dir, "builtin"));
    await Deno.writeTextFile(join(dir, "builtin", "c.ts"), tool("gamma"));
    const registry = await loadRegistry({
      sandbox,
      dirs: [join(dir, "builtin"), { path: dir, origin: "file" }],
    });
    const snap = registry.snapshot;
    assert.deepEqual([...snap.tools.keys()], ["alpha", "gamma"]);
    assert.equal(snap.errors.length, 1);
    assert.equal(snap.errors[0]!.path, join(dir, "b.ts"));
    assert.match(snap.errors[0]!.message, /SyntaxError/);
    await registry.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Registry.reload() describes only files that changed", async () => {
  const dir = await Deno.makeTempDir();
  const sandbox = createFakeSandbox();
  try {
    await Deno.writeTextFile(join(dir, "a.ts"), tool("alpha"));
    await Deno.writeTextFile(join(dir, "b.ts"), tool("beta"));
    const registry = await loadRegistry({ sandbox, dirs: [dir] });
    assert.equal(sandbox.described.length, 2);
    assert.equal(await registry.reload(), null, "nothing changed");
    assert.equal(sandbox.described.length, 2);
    await Deno.writeTextFile(join(dir, "b.ts"), tool("beta", { tags: ["x"] }));
    const change = await registry.reload();
    assert.deepEqual(sandbox.described.slice(2), [join(dir, "b.ts")]);
    assert.deepEqual(change?.tools.changed, ["beta"]);
    assert.deepEqual(registry.snapshot.tools.get("beta")?.tags, ["x"]);
    await registry.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Registry with watch reflects add, change and remove, keeping old entries intact", async () => {
  const dir = await Deno.makeTempDir();
  const sandbox = createFakeSandbox();
  const registry = await loadRegistry({ sandbox, dirs: [dir], watch: true });
  try {
    assert.equal(registry.snapshot.tools.size, 0);
    let change = nextChange(registry, (c) => c.tools.added.includes("alpha"));
    await Deno.writeTextFile(join(dir, "a.ts"), tool("alpha"));
    assert.ok((await change).snapshot.tools.has("alpha"));

    const held = registry.snapshot.tools.get("alpha")!;
    change = nextChange(registry, (c) => c.tools.changed.includes("alpha"));
    await Deno.writeTextFile(
      join(dir, "a.ts"),
      tool("alpha", { description: "v2" }),
    );
    const changed = await change;
    assert.equal(changed.snapshot.tools.get("alpha")?.description, "v2");
    assert.equal(held.description, "alpha", "a held entry keeps its version");
    assert.notEqual(held.hash, changed.snapshot.tools.get("alpha")?.hash);

    change = nextChange(registry, (c) => c.errorsChanged);
    await Deno.writeTextFile(join(dir, "b.ts"), "{broken");
    assert.equal((await change).snapshot.errors[0]?.path, join(dir, "b.ts"));
    assert.ok(registry.snapshot.tools.has("alpha"), "others keep working");

    change = nextChange(registry, (c) => c.tools.removed.includes("alpha"));
    await Deno.remove(join(dir, "a.ts"));
    assert.equal((await change).snapshot.tools.size, 0);
  } finally {
    await registry.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Registry with watch re-reads modules beside a changed helper file", async () => {
  const dir = await Deno.makeTempDir();
  const sandbox = createFakeSandbox();
  await Deno.mkdir(join(dir, "kit"));
  await Deno.writeTextFile(join(dir, "kit", "a.ts"), tool("alpha"));
  await Deno.writeTextFile(join(dir, "other.ts"), tool("other"));
  const registry = await loadRegistry({ sandbox, dirs: [dir], watch: true });
  try {
    // The helper change alone changes no definition, so wait for the
    // re-describe of a.ts through the sandbox log instead of a change event;
    // then a real change proves the reload went through.
    const change = nextChange(registry, (c) => c.tools.added.includes("beta"));
    await Deno.writeTextFile(join(dir, "kit", "_helper.ts"), "export {}");
    await Deno.writeTextFile(join(dir, "kit", "b.ts"), tool("beta"));
    await change;
    const again = sandbox.described.slice(2);
    assert.ok(again.includes(join(dir, "kit", "a.ts")), again.join());
    assert.ok(!again.includes(join(dir, "other.ts")), again.join());
  } finally {
    await registry.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadRegistry() loads 1,000 generated tool files", async () => {
  const dir = await Deno.makeTempDir();
  const sandbox = createFakeSandbox();
  try {
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        Deno.writeTextFile(
          join(dir, `tool_${String(i).padStart(4, "0")}.ts`),
          tool(`tool_${i}`),
        )),
    );
    const registry = await loadRegistry({ sandbox, dirs: [dir] });
    assert.equal(registry.snapshot.tools.size, 1000);
    assert.equal(
      registry.snapshot.tools.get("tool_999")?.description,
      "tool_999",
    );
    assert.deepEqual(registry.snapshot.errors, []);
    await registry.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadRegistry() reports progress after each module, ending at the total", async () => {
  const dir = await Deno.makeTempDir();
  const sandbox = createFakeSandbox();
  try {
    for (let i = 0; i < 5; i++) {
      await Deno.writeTextFile(join(dir, `t${i}.ts`), tool(`t${i}`));
    }
    const seen: number[] = [];
    const registry = await loadRegistry({
      sandbox,
      dirs: [dir],
      onProgress: ({ done, total }) => {
        assert.equal(total, 5);
        seen.push(done);
      },
    });
    await registry.close();
    assert.deepEqual(seen, [1, 2, 3, 4, 5]);
    assert.equal(registry.snapshot.tools.size, 5);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("reload() keeps a name with its holder: a later file is the impostor", async () => {
  const builtin = await Deno.makeTempDir();
  const ops = await Deno.makeTempDir();
  const sandbox = createFakeSandbox();
  try {
    await Deno.writeTextFile(join(builtin, "read_file.ts"), tool("read_file"));
    await Deno.writeTextFile(join(ops, "z_echo.ts"), tool("echo"));
    const registry = await loadRegistry({
      sandbox,
      dirs: [{ path: builtin, origin: "builtin" }, ops],
    });
    // Sorts before the holder, and claims a shipped name too.
    await Deno.writeTextFile(join(ops, "a_echo.ts"), tool("echo"));
    await Deno.writeTextFile(join(ops, "a_read.ts"), tool("read_file"));
    await registry.reload();
    const snap = registry.snapshot;
    assert.equal(snap.tools.get("echo")?.path, join(ops, "z_echo.ts"));
    assert.equal(snap.tools.get("read_file")?.origin, "builtin");
    assert.equal(snap.blocked.size, 0);
    assert.deepEqual(
      snap.refused.map((r) => r.path).sort(),
      [join(ops, "a_echo.ts"), join(ops, "a_read.ts")],
    );
    assert.match(
      snap.refused.find((r) => r.name === "read_file")?.reason ?? "",
      /the name is taken by builtin ".*\/read_file\.ts"/,
    );
    await registry.close();
  } finally {
    await Deno.remove(builtin, { recursive: true });
    await Deno.remove(ops, { recursive: true });
  }
});

Deno.test("progressLogger() stays quiet for a fast load", () => {
  const lines: string[] = [];
  const onProgress = progressLogger((l) => lines.push(l));
  for (let done = 1; done <= 100; done++) {
    onProgress({ done, total: 100, elapsedMs: done * 5 });
  }
  assert.deepEqual(lines, []);
});

Deno.test("progressLogger() reports a slow load a few times a second, then its end", () => {
  const lines: string[] = [];
  const onProgress = progressLogger((l) => lines.push(l));
  // 1,000 modules over 3 s, one every 3 ms.
  for (let done = 1; done <= 1000; done++) {
    onProgress({ done, total: 1000, elapsedMs: done * 3 });
  }
  const progress = lines.slice(0, -1);
  assert.ok(progress.length >= 7 && progress.length <= 9, lines.join("\n"));
  for (const line of progress) {
    assert.match(line, /^loading skills: \d+\/1000 modules$/);
  }
  assert.equal(lines.at(-1), "loaded skills: 1000 modules in 3.0 s");
  // A later reload starts over: quiet again when fast.
  lines.length = 0;
  onProgress({ done: 1, total: 1, elapsedMs: 10 });
  assert.deepEqual(lines, []);
});
