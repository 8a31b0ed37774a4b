import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { createSandbox } from "../sandbox/sandbox.ts";
import { DiscoveryCache } from "./cache.ts";
import { discoveryUsage } from "./queue.ts";

const FIXTURES = fileURLToPath(
  new URL("../../tests/fixtures/sandbox/", import.meta.url),
);

Deno.test("describe() converts zod schemas and reports dynamic permissions", async () => {
  const sandbox = createSandbox({ cacheDir: null });
  try {
    const zod = await sandbox.describe(join(FIXTURES, "zod_tool/mod.ts"));
    assert.equal(zod.error, null);
    const greet = zod.definitions[0]!;
    assert.equal(greet.export, "greet");
    assert.equal(greet.runnable, true);
    const input = greet.fields.input as Record<string, unknown>;
    assert.equal(input.type, "object");
    assert.deepEqual(Object.keys(input.properties as object), ["name"]);
    const dyn = await sandbox.describe(join(FIXTURES, "dynamic_perms/mod.ts"));
    assert.equal(dyn.definitions[0]?.permissions, "dynamic");
    const perms = await sandbox.resolvePermissions(
      join(FIXTURES, "dynamic_perms/mod.ts"),
      "default",
      { root: "/data" },
    );
    assert.deepEqual(perms, { read: ["/data"] });
  } finally {
    await sandbox.close();
  }
});

Deno.test("describe() reports a module that throws without affecting others", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "bad"));
    await Deno.writeTextFile(
      join(dir, "bad/mod.ts"),
      'throw new Error("boom");',
    );
    const sandbox = createSandbox({ cacheDir: null });
    try {
      const [bad, good] = await Promise.all([
        sandbox.describe(join(dir, "bad/mod.ts")),
        sandbox.describe(join(FIXTURES, "add/mod.ts")),
      ]);
      assert.match(bad.error ?? "", /boom/);
      assert.equal(good.definitions[0]?.name, "add");
    } finally {
      await sandbox.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("describe() answers from the cache after a restart, until the file or the policy changes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cacheDir = join(dir, "cache");
    await Deno.mkdir(join(dir, "tool"));
    const path = join(dir, "tool/mod.ts");
    await Deno.writeTextFile(join(dir, "tool/_util.ts"), "export const n = 1;");
    // A computed name: the module cannot be read from its syntax, so a
    // description not from the cache starts a discovery process.
    const source = (name: string) =>
      `import { n } from "./_util.ts";\nexport default { kind: "tool", name: String("${name}"), description: "d", run: () => n };`;
    await Deno.writeTextFile(path, source("first"));
    const first = createSandbox({ cacheDir });
    const described = await first.describe(path);
    assert.equal(described.definitions[0]?.name, "first");
    await first.close();

    // A restart with the same policy answers from the cache (nothing is
    // started), until a local import changes the version.
    const second = createSandbox({ cacheDir });
    try {
      const before = discoveryUsage().processes;
      const cached = await second.describe(path);
      assert.deepEqual(cached, described);
      assert.equal(discoveryUsage().processes, before, "a process was started");
      await Deno.writeTextFile(
        join(dir, "tool/_util.ts"),
        "export const n = 2;",
      );
      const changed = await second.describe(path);
      assert.equal(discoveryUsage().processes, before + 1);
      assert.notEqual(changed.hash, described.hash);
      assert.equal(changed.definitions[0]?.name, "first");
    } finally {
      await second.close();
    }
    // A policy that now refuses the module any read grant refuses it,
    // cached or not.
    const third = createSandbox({
      cacheDir,
      policy: { deny: [join(dir, "tool")] },
    });
    try {
      const refused = await third.describe(path);
      assert.deepEqual(refused.definitions, []);
      assert.match(refused.error ?? "", /exceeds the host policy/);
    } finally {
      await third.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DiscoveryCache ignores a stale or corrupt entry", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cache = new DiscoveryCache({ dir });
    await cache.put({ path: "/m.ts", hash: "a", definitions: [], error: null });
    assert.equal(await cache.get("/m.ts", "b"), null);
    for await (const entry of Deno.readDir(join(dir, "describe"))) {
      await Deno.writeTextFile(join(dir, "describe", entry.name), "{not json");
    }
    assert.equal(await cache.get("/m.ts", "a"), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DiscoveryCache makes its folder again when it was removed", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cache = new DiscoveryCache({ dir });
    const a = { path: "/a.ts", hash: "a", definitions: [], error: null };
    await cache.put(a);
    await Deno.remove(join(dir, "describe"), { recursive: true });
    await cache.put(a);
    assert.deepEqual(await cache.get("/a.ts", "a"), a);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("describe() reads a literal module without a process, and runs one with code", async () => {
  const dir = await Deno.makeTempDir();
  const sandbox = createSandbox({ cacheDir: null });
  try {
    const literal = join(dir, "literal.ts");
    const code = join(dir, "code.ts");
    await Deno.writeTextFile(
      literal,
      `export default { kind: "tool", name: "lit", run: () => 1 };`,
    );
    await Deno.writeTextFile(
      code,
      `export default { kind: "tool", name: String("code"), run: () => 1 };`,
    );
    const before = discoveryUsage().processes;
    const read = await sandbox.describe(literal);
    assert.equal(read.definitions[0]?.name, "lit");
    assert.equal(discoveryUsage().processes, before, "a process was started");
    const ran = await sandbox.describe(code);
    assert.equal(ran.definitions[0]?.name, "code");
    assert.equal(discoveryUsage().processes, before + 1);
    // And what it reads runs like any module when called.
    const outcome = await sandbox.call({
      path: literal,
      export: "default",
      version: read.hash,
      args: {},
      grant: {},
      timeoutMs: 20_000,
      sessionId: "s",
      callId: "c1",
      config: {},
      metadata: {},
      isolation: "warm",
    }, {
      onEvent() {},
      callTool: () => Promise.reject(new Error("none")),
      chat: () => Promise.reject(new Error("none")),
    });
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
  } finally {
    await sandbox.close();
    await Deno.remove(dir, { recursive: true });
  }
});
