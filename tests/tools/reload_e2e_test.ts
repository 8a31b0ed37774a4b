import assert from "node:assert/strict";
import { join } from "node:path";
import {
  connectClient,
  type Msg,
  startToolsHost,
  writeModule,
} from "../support/tools_harness.ts";

// A tool that reports it started, then waits for the test's HTTP server to
// answer: the test decides when the call ends, with no sleeps.
function gatedTool(version: string, port: number): string {
  return `{
    kind: "tool", name: "gated", description: "Waits for a gate, then says its version",
    permissions: { net: ["127.0.0.1:${port}"] },
    async run(_args, ctx) {
      ctx.status("started");
      await (await fetch("http://127.0.0.1:${port}/")).text();
      return "${version}";
    },
  }`;
}

Deno.test("e2e hot reload: calls in flight finish on their version; add, change, break and remove are pushed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_reload_e2e_" });
  const gates: (() => void)[] = [];
  let arrived: (() => void) | null = null;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Promise<Response>((resolve) => {
        gates.push(() => resolve(new Response("go")));
        arrived?.();
      }),
  );
  const port = server.addr.port;
  // Resolves once `n` calls are waiting at the gate (each arrival wakes it).
  const untilGates = async (n: number) => {
    while (gates.length < n) {
      await new Promise<void>((resolve) => arrived = resolve);
    }
  };
  await writeModule(dir, "gated.ts", gatedTool("v1", port));
  await writeModule(
    dir,
    "steady.ts",
    `{ kind: "tool", name: "steady", description: "Always works", run: () => "steady" }`,
  );
  await using h = await startToolsHost({
    dirs: [dir],
    policy: {
      permissions: { net: [`127.0.0.1:${port}`], shared_folders: [dir] },
    },
    // Confined, the module's fetch goes through the egress proxy, which
    // reaches the loopback server only because the operator allows it.
    allowPrivateHosts: [`127.0.0.1:${port}`],
  });
  const c = await connectClient(h.wsUrl);
  try {
    // Several calls of v1 in flight at once.
    const inFlight = [1, 2, 3].map(() =>
      c.request("tool/call/req", { tool_name: "gated", arguments: {} })
    );
    await untilGates(3);

    const changed = c.push((m) =>
      m.kind === "tools.changed" &&
      ((m.data as Msg).changed as string[]).includes("gated")
    );
    // The watcher's reload describes the changed file alone: the others
    // are cache hits and start no discovery.
    const described: string[] = [];
    const describe = h.sandbox.describe;
    h.sandbox.describe = (path) => {
      described.push(path);
      return describe(path);
    };
    await writeModule(dir, "gated.ts", gatedTool("v2", port));
    const push = await changed;
    h.sandbox.describe = describe;
    assert.equal(push.type, "invoke/event");
    assert.ok(!("req_id" in push));
    assert.deepEqual(new Set(described), new Set([join(dir, "gated.ts")]));

    // The new version serves new calls while the old ones still wait.
    const fresh = c.request("tool/call/req", {
      tool_name: "gated",
      arguments: {},
    });
    await untilGates(4);
    for (const open of gates.splice(0)) open();
    const old = await Promise.all(inFlight);
    assert.deepEqual(old.map((a) => (a.final.data as Msg).data), [
      "v1",
      "v1",
      "v1",
    ]);
    assert.equal(((await fresh).final.data as Msg).data, "v2");

    // A broken file is reported while every other tool keeps working.
    const broken = c.push((m) =>
      m.kind === "tools.changed" &&
      ((m.data as Msg).added as string[]).includes("added")
    );
    await Deno.writeTextFile(join(dir, "broken.ts"), "export default {{{");
    await writeModule(
      dir,
      "added.ts",
      `{ kind: "tool", name: "added", description: "New", run: () => "new" }`,
    );
    await broken;
    assert.ok(
      h.registry.snapshot.errors.some((e) => e.path === join(dir, "broken.ts")),
    );
    const steady = await c.request("tool/call/req", {
      tool_name: "steady",
      arguments: {},
    });
    assert.equal((steady.final.data as Msg).data, "steady");
    const added = await c.request("tool/call/req", {
      tool_name: "added",
      arguments: {},
    });
    assert.equal((added.final.data as Msg).data, "new");

    const removed = c.push((m) =>
      m.kind === "tools.changed" &&
      ((m.data as Msg).removed as string[]).includes("steady")
    );
    await Deno.remove(join(dir, "steady.ts"));
    await removed;
    const gone = await c.request("tool/call/req", {
      tool_name: "steady",
      arguments: {},
    });
    assert.equal(gone.final.code, "unknown_tool");
  } finally {
    // A failed assertion must not leave calls at the gate: shutdown waits
    // for them, and the test would hang instead of reporting.
    for (const open of gates.splice(0)) open();
    await c.close();
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("e2e hot reload: a helper in a subfolder, edited, reloads the module importing it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_helper_e2e_" });
  await Deno.mkdir(join(dir, "lib"));
  const words = join(dir, "lib", "_words.ts");
  await Deno.writeTextFile(words, `export const WORD = "v1";\n`);
  await Deno.writeTextFile(
    join(dir, "worded.ts"),
    `import { WORD } from "./lib/_words.ts";
export default { kind: "tool", name: "worded", description: "Says " + WORD, run: () => WORD };
`,
  );
  await using h = await startToolsHost({ dirs: [dir] });
  const c = await connectClient(h.wsUrl);
  try {
    const first = await c.request("tool/call/req", {
      tool_name: "worded",
      arguments: {},
    });
    assert.equal((first.final.data as Msg).data, "v1");
    const changed = c.push((m) =>
      m.kind === "tools.changed" &&
      ((m.data as Msg).changed as string[]).includes("worded")
    );
    await Deno.writeTextFile(words, `export const WORD = "v2";\n`);
    await changed; // fails after 5 s: the module was not read again
    assert.equal(
      h.registry.snapshot.tools.get("worded")?.description,
      "Says v2",
    );
    const second = await c.request("tool/call/req", {
      tool_name: "worded",
      arguments: {},
    });
    assert.equal((second.final.data as Msg).data, "v2");
  } finally {
    await c.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("e2e: 1,000 generated tool files load and list correctly", async () => {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_1000_e2e_" });
  const cache = await Deno.makeTempDir({ prefix: "skillbox_1000_cache_" });
  await Promise.all(Array.from({ length: 1000 }, (_, i) =>
    writeModule(
      dir,
      `gen_${String(i).padStart(4, "0")}.ts`,
      `{ kind: "tool", name: "gen_${i}", description: "${
        i === 777 ? "Convert currency amounts" : `Generated tool number ${i}`
      }",
         tags: ["gen", "${i % 2 === 0 ? "even" : "odd"}"], run: () => ${i} }`,
    )));
  try {
    await using h = await startToolsHost({
      dirs: [dir],
      cacheDir: cache,
      policy: {},
    });
    const c = await connectClient(h.wsUrl);
    try {
      assert.deepEqual(h.registry.snapshot.errors, []);
      const all = await c.request("tool/list/req", {});
      const names = (all.final.tools as Msg[]).map((t) => t.name as string);
      assert.equal(names.length, 1000);
      assert.deepEqual(names, [...names].sort());
      const odd = await c.request("tool/list/req", {
        filter_tags: ["gen", "odd"],
      });
      assert.equal((odd.final.tools as Msg[]).length, 500);
      const hit = await c.request("tool/list/req", {
        query: "convert currency",
      });
      assert.equal((hit.final.tools as Msg[])[0]?.name, "gen_777");
      const r = await c.request("tool/call/req", {
        tool_name: "gen_999",
        arguments: {},
      });
      assert.equal((r.final.data as Msg).data, 999);
    } finally {
      await c.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(cache, { recursive: true });
  }
});
