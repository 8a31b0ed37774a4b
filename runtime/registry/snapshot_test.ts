import assert from "node:assert/strict";
import type { DescribedDefinition } from "../sandbox/types.ts";
import { buildSnapshot, type LoadedModule } from "./snapshot.ts";

function mod(
  path: string,
  definitions: Partial<DescribedDefinition>[],
  error: string | null = null,
): LoadedModule {
  return {
    origin: "file",
    root: "/s",
    module: {
      path,
      hash: `hash-of-${path}`,
      error,
      definitions: definitions.map((d) => ({
        export: "default",
        kind: "tool",
        name: "x",
        fields: {},
        permissions: {},
        runnable: true,
        ...d,
      })),
    },
  };
}

Deno.test("buildSnapshot() normalizes tool fields with A2E defaults", () => {
  const snap = buildSnapshot([
    mod("/s/a.ts", [{
      name: "read_csv",
      fields: {
        description: "Read a CSV file",
        input_schema: { type: "object", properties: { path: {} } },
        tags: ["csv"],
        defer_loading: true,
      },
      permissions: "dynamic",
    }]),
  ], { generation: 3 });
  const tool = snap.tools.get("read_csv");
  assert.ok(tool);
  assert.equal(snap.generation, 3);
  assert.equal(tool.description, "Read a CSV file");
  assert.deepEqual(tool.inputSchema, {
    type: "object",
    properties: { path: {} },
  });
  assert.deepEqual(tool.outputSchema, {});
  assert.equal(tool.streaming, true);
  assert.equal(tool.idempotent, false);
  assert.equal(tool.deferLoading, true);
  assert.equal(tool.version, "1.0.0");
  assert.equal(tool.hash, "hash-of-/s/a.ts");
  assert.equal(tool.permissions, "dynamic");
  assert.equal(tool.toolkit, null);
  assert.ok(Object.isFrozen(tool));
});

Deno.test("buildSnapshot() assigns toolkit membership by place: folder, own module, list", () => {
  const snap = buildSnapshot([
    mod("/s/fs/toolkit.ts", [{ kind: "toolkit", name: "fs", runnable: false }]),
    mod("/s/fs/read.ts", [{ name: "read" }]),
    mod("/s/fs/deep/stat.ts", [{ name: "stat", fields: { toolkit: "fs" } }]),
    mod("/s/web.ts", [{
      kind: "toolkit",
      name: "web",
      fields: { tools: ["fetch", "post"] },
    }]),
    mod("/s/fetch.ts", [{ name: "fetch" }]),
    mod("/s/post.ts", [{ name: "post", fields: { toolkit: "web" } }]),
    // An imported MCP server: its toolkit and tools in one module.
    {
      ...mod("/mcp:/one", [
        { kind: "toolkit", name: "one", export: "kit" },
        { name: "one_tool", fields: { toolkit: "one" } },
      ]),
      origin: "mcp" as const,
      root: "/mcp:/",
    },
    mod("/s/loose.ts", [{ name: "loose" }]),
    mod("/s/beside.ts", [{ name: "beside", fields: { toolkit: "web" } }]),
  ]);
  const kit = (name: string) => snap.tools.get(name)?.toolkit;
  assert.equal(kit("beside"), "web", "a loose toolkit beside it");
  assert.equal(kit("read"), "fs");
  assert.equal(kit("stat"), "fs", "a field naming its folder's toolkit");
  assert.equal(kit("fetch"), "web", "a loose tool its folder's toolkit lists");
  assert.equal(kit("post"), "web");
  assert.equal(kit("one_tool"), "one", "a toolkit of its own module");
  assert.equal(kit("loose"), null);
  assert.deepEqual(snap.toolkits.get("fs")?.tools, ["read", "stat"]);
  assert.deepEqual(snap.toolkits.get("web")?.tools, [
    "beside",
    "fetch",
    "post",
  ]);
  assert.deepEqual(snap.errors, []);
  assert.deepEqual(snap.refused, []);
});

Deno.test("buildSnapshot() refuses a toolkit field naming another folder's toolkit", () => {
  const snap = buildSnapshot([
    mod("/s/fs/toolkit.ts", [{ kind: "toolkit", name: "fs" }]),
    mod("/s/web/toolkit.ts", [{ kind: "toolkit", name: "web" }]),
    mod("/s/fs/sneak.ts", [{ name: "sneak", fields: { toolkit: "web" } }]),
    mod("/s/own/lone.ts", [{ name: "lone", fields: { toolkit: "fs" } }]),
    mod("/s/ghost.ts", [{ name: "ghost", fields: { toolkit: "nowhere" } }]),
  ]);
  assert.equal(snap.tools.size, 0);
  assert.deepEqual(snap.toolkits.get("web")?.tools, []);
  const why = Object.fromEntries(snap.refused.map((r) => [r.name, r.reason]));
  assert.equal(
    why.sneak,
    'Tool "sneak" in "/s/fs/sneak.ts" is refused: its "toolkit" field names ' +
      '"web", defined in "/s/web/toolkit.ts", but a tool belongs to the ' +
      `toolkit of its own folder (its folder's is "fs")`,
  );
  assert.match(
    why.lone ?? "",
    /none is defined in its folder or a folder above/,
  );
  assert.match(why.ghost ?? "", /names "nowhere", but/);
  assert.deepEqual(
    snap.errors.map((e) => e.name).sort(),
    ["ghost", "lone", "sneak"],
  );
});

Deno.test("buildSnapshot() refuses a toolkit of another origin and claims outside the toolkit's tree", () => {
  const builtin = (path: string, defs: Partial<DescribedDefinition>[]) => ({
    ...mod(path, defs),
    origin: "builtin" as const,
    root: "/b",
  });
  const snap = buildSnapshot([
    builtin("/b/http/toolkit.ts", [{ kind: "toolkit", name: "http" }]),
    builtin("/b/http/get.ts", [{ name: "get", fields: { toolkit: "http" } }]),
    builtin("/b/loose.ts", [{ name: "shipped_loose" }]),
    // A drop-in at the top of its own skills folder, named like a folder.
    mod("/s/http/steal.ts", [{ name: "steal", fields: { toolkit: "http" } }]),
    mod("/s/claim/toolkit.ts", [{
      kind: "toolkit",
      name: "claim",
      fields: { tools: ["get", "shipped_loose", "mine"] },
    }]),
    mod("/s/mine.ts", [{ name: "mine" }]),
  ], {
    roots: [{ path: "/b", origin: "builtin" }, { path: "/s", origin: "file" }],
  });
  assert.equal(snap.tools.has("steal"), false);
  assert.equal(snap.tools.get("get")?.toolkit, "http");
  assert.equal(snap.tools.get("shipped_loose")?.toolkit, null);
  assert.equal(snap.tools.get("mine")?.toolkit, null);
  assert.deepEqual(snap.toolkits.get("claim")?.tools, []);
  assert.deepEqual(snap.toolkits.get("http")?.tools, ["get"]);
  const claims = snap.refused.filter((r) => r.name === "claim");
  assert.deepEqual(claims.map((r) => r.reason), [
    'Toolkit "claim" in "/s/claim/toolkit.ts" cannot claim tool "get": it belongs to toolkit "http" of its folder',
    'Toolkit "claim" in "/s/claim/toolkit.ts" cannot claim tool "shipped_loose": it is builtin "b/loose.ts", outside the toolkit\'s folder',
    'Toolkit "claim" in "/s/claim/toolkit.ts" cannot claim tool "mine": it is "/s/mine.ts", outside the toolkit\'s folder',
  ]);
  assert.match(
    snap.refused.find((r) => r.name === "steal")?.reason ?? "",
    /names "http", defined in builtin "b\/http\/toolkit.ts"/,
  );
});

Deno.test("buildSnapshot() gives a name to builtin, then folders in order, then the earlier holder", () => {
  const at = (origin: "builtin" | "file", root: string, path: string) => ({
    ...mod(path, [{ name: "read_file" }, {
      kind: "toolkit",
      name: "filesystem",
      export: "kit",
    }]),
    origin,
    root,
  });
  const roots = [
    { path: "/b", origin: "builtin" as const },
    { path: "/one", origin: "file" as const },
    { path: "/two", origin: "file" as const },
  ];
  const first = buildSnapshot([
    at("file", "/two", "/two/a.ts"),
    at("file", "/one", "/one/z.ts"),
    at("builtin", "/b", "/b/fs/read_file.ts"),
  ], { roots });
  assert.equal(first.tools.get("read_file")?.origin, "builtin");
  assert.equal(first.toolkits.get("filesystem")?.path, "/b/fs/read_file.ts");
  assert.equal(first.blocked.size, 0);
  assert.deepEqual(
    first.refused.filter((r) => r.kind === "tool").map((r) => r.reason),
    [
      'Tool "read_file" in "/one/z.ts" is refused: the name is taken by builtin "b/fs/read_file.ts"',
      'Tool "read_file" in "/two/a.ts" is refused: the name is taken by builtin "b/fs/read_file.ts"',
    ],
  );
  // Without the builtin, the folder listed first wins.
  const second = buildSnapshot([
    at("file", "/two", "/two/a.ts"),
    at("file", "/one", "/one/z.ts"),
  ], { roots });
  assert.equal(second.tools.get("read_file")?.path, "/one/z.ts");
  // In one folder, the holder keeps the name against a file sorting first.
  const held = buildSnapshot([at("file", "/one", "/one/z.ts")], { roots });
  const reloaded = buildSnapshot([
    at("file", "/one", "/one/a.ts"),
    at("file", "/one", "/one/z.ts"),
  ], { roots, previous: held });
  assert.equal(reloaded.tools.get("read_file")?.path, "/one/z.ts");
  assert.equal(reloaded.blocked.size, 0);
  assert.match(
    reloaded.refused[0]?.reason ?? "",
    /^Toolkit "filesystem" in "\/one\/a.ts" is refused: the name is taken by "\/one\/z.ts"$/,
  );
  // The shipped toolkit's folder does not lend itself to an impostor's tools.
  const kitOnly = buildSnapshot([
    {
      ...mod("/b/fs/toolkit.ts", [{ kind: "toolkit", name: "filesystem" }]),
      origin: "builtin" as const,
      root: "/b",
    },
    {
      ...mod("/one/fake/toolkit.ts", [{ kind: "toolkit", name: "filesystem" }]),
      root: "/one",
    },
    { ...mod("/one/fake/tool.ts", [{ name: "fake_tool" }]), root: "/one" },
  ], { roots });
  assert.equal(kitOnly.toolkits.get("filesystem")?.origin, "builtin");
  assert.equal(kitOnly.tools.has("fake_tool"), false);
  assert.match(
    kitOnly.refused.find((r) => r.name === "fake_tool")?.reason ?? "",
    /the toolkit of its folder, "filesystem" in "\/one\/fake\/toolkit.ts", is not served/,
  );
});

Deno.test("buildSnapshot() serves neither side of a name clash and names both files", () => {
  const snap = buildSnapshot([
    mod("/s/b.ts", [{ name: "dup" }, { name: "ok", export: "ok" }]),
    mod("/s/a.ts", [{ name: "dup" }]),
    mod("/s/k1.ts", [{ kind: "toolkit", name: "kit" }]),
    mod("/s/k2.ts", [{ kind: "toolkit", name: "kit" }]),
  ]);
  assert.deepEqual([...snap.tools.keys()], ["ok"]);
  assert.equal(snap.toolkits.size, 0);
  assert.equal(
    snap.blocked.get("dup"),
    'Tool name "dup" is defined in "/s/a.ts" and "/s/b.ts": neither is served',
  );
  assert.match(snap.blocked.get("kit") ?? "", /^Toolkit name "kit"/);
  assert.deepEqual(
    snap.errors.map((e) => [e.path, e.name]).sort(),
    [["/s/a.ts", "dup"], ["/s/b.ts", "dup"], ["/s/k1.ts", "kit"], [
      "/s/k2.ts",
      "kit",
    ]],
  );
});

Deno.test("buildSnapshot() reports broken modules and bad definitions and keeps the rest", async (t) => {
  const cases: [string, LoadedModule, RegExp][] = [
    [
      "a module that failed to load",
      mod("/s/broken.ts", [], "SyntaxError: Unexpected token"),
      /^Cannot load "\/s\/broken.ts": SyntaxError/,
    ],
    [
      "a field of the wrong type",
      mod("/s/bad.ts", [{ name: "bad", fields: { tags: "csv" } }]),
      /^Cannot load tool "bad" from "\/s\/bad.ts": tags: /,
    ],
    [
      "a tool without run",
      mod("/s/norun.ts", [{ name: "norun", runnable: false }]),
      /no "run" function/,
    ],
    [
      "a name LLM APIs reject",
      mod("/s/space.ts", [{ name: "has space" }]),
      /^Cannot load tool "has space"/,
    ],
    [
      "two toolkits in one folder",
      mod("/s/two.ts", [{ kind: "toolkit", name: "k1" }, {
        kind: "toolkit",
        name: "k2",
        export: "k2",
      }]),
      /holds two toolkits "k1" and "k2"/,
    ],
  ];
  for (const [label, broken, pattern] of cases) {
    await t.step(label, () => {
      const snap = buildSnapshot([
        broken,
        mod("/s/good.ts", [{ name: "good" }]),
      ]);
      assert.ok(snap.tools.has("good"));
      assert.equal(snap.errors.length, 1, JSON.stringify(snap.errors));
      assert.match(snap.errors[0]!.message, pattern);
      assert.equal(snap.errors[0]!.path, broken.module.path);
    });
  }
});

Deno.test("buildSnapshot() keeps skills with their fields", () => {
  const snap = buildSnapshot([
    mod("/s/sk.ts", [{
      kind: "skill",
      name: "summarize",
      fields: { description: "S", max_turns: 3 },
      runnable: false,
    }]),
  ], { agentSkills: ["/s/z", "/s/a"] });
  const skill = snap.skills.get("summarize");
  assert.equal(skill?.fields.max_turns, 3);
  assert.equal(skill?.runnable, false);
  assert.deepEqual(snap.agentSkills, ["/s/a", "/s/z"]);
});

Deno.test("buildSnapshot() keeps a name for its holder while the holder's file is broken", () => {
  const roots = [{ path: "/s", origin: "file" as const }];
  const holder = mod("/s/z.ts", [{ name: "echo" }]);
  const broken = mod("/s/z.ts", [], "SyntaxError: Unexpected token");
  const impostor = mod("/s/a.ts", [{ name: "echo" }]);
  const first = buildSnapshot([holder], { roots });
  const mid = buildSnapshot([broken, impostor], { roots, previous: first });
  assert.equal(mid.tools.has("echo"), false);
  assert.equal(
    mid.refused[0]?.reason,
    'Tool "echo" in "/s/a.ts" is refused: the name is held by "/s/z.ts", which failed to load',
  );
  // Still broken on the next reload: still held.
  const again = buildSnapshot([broken, impostor], { roots, previous: mid });
  assert.equal(again.tools.has("echo"), false);
  const fixed = buildSnapshot([holder, impostor], { roots, previous: again });
  assert.equal(fixed.tools.get("echo")?.path, "/s/z.ts");
  assert.match(fixed.refused[0]?.reason ?? "", /taken by "\/s\/z.ts"/);
  // A holder gone for good releases the name.
  const gone = buildSnapshot([impostor], { roots, previous: fixed });
  assert.equal(gone.tools.get("echo")?.path, "/s/a.ts");
});

Deno.test("buildSnapshot() lets a broken holder's name go to a newcomer of higher standing only", () => {
  const roots = ["/one", "/two", "/three"].map((path) => ({
    path,
    origin: "file" as const,
  }));
  const at = (root: string, path: string, error: string | null = null) => ({
    ...mod(path, error ? [] : [{ name: "echo" }], error),
    root,
  });
  const first = buildSnapshot([at("/two", "/two/z.ts")], { roots });
  const newcomers = [at("/three", "/three/a.ts"), at("/two", "/two/b.ts")];
  const broken = at("/two", "/two/z.ts", "SyntaxError: Unexpected token");
  // Held against its own folder and a later one, refused in path order.
  const held = buildSnapshot([broken, ...newcomers], {
    roots,
    previous: first,
  });
  assert.equal(held.tools.has("echo"), false);
  assert.deepEqual(held.refused.map((r) => r.path), [
    "/three/a.ts",
    "/two/b.ts",
  ]);
  assert.match(held.refused[0]!.reason, /held by "\/two\/z.ts"/);
  // An earlier folder's newcomer outranks it.
  const taken = buildSnapshot([broken, ...newcomers, at("/one", "/one/c.ts")], {
    roots,
    previous: held,
  });
  assert.equal(taken.tools.get("echo")?.path, "/one/c.ts");
  assert.deepEqual(
    taken.refused.map((r) => r.reason.replace(/.* is refused: /, "")),
    ['the name is taken by "/one/c.ts"', 'the name is taken by "/one/c.ts"'],
  );
});

Deno.test("buildSnapshot() takes two imported MCP servers side by side as two toolkits, not a crowded folder", () => {
  const server = (name: string) => ({
    ...mod(`/mcp:/${name}`, [
      { kind: "toolkit", name, export: "kit" },
      { name: `${name}_tool`, fields: { toolkit: name } },
    ]),
    origin: "mcp" as const,
    root: "/mcp:/",
  });
  const snap = buildSnapshot([server("one"), server("two")]);
  assert.deepEqual(snap.errors, []);
  assert.equal(snap.tools.get("one_tool")?.toolkit, "one");
  assert.equal(snap.tools.get("two_tool")?.toolkit, "two");
});

Deno.test("buildSnapshot() gives a toolkit name to an imported server before any skills folder", () => {
  // The MCP root is never one of the roots: an imported server still
  // outranks the drop-ins of every configured folder, however many.
  const roots = [
    { path: "/b", origin: "builtin" as const },
    { path: "/one", origin: "file" as const },
    { path: "/two", origin: "file" as const },
  ];
  const snap = buildSnapshot([
    {
      ...mod("/mcp:/kit", [{ kind: "toolkit", name: "kit" }]),
      origin: "mcp" as const,
      root: "/mcp:/",
    },
    {
      ...mod("/one/kit/toolkit.ts", [{ kind: "toolkit", name: "kit" }]),
      root: "/one",
    },
  ], { roots });
  assert.equal(snap.toolkits.get("kit")?.origin, "mcp");
  assert.deepEqual(snap.refused.map((r) => r.reason), [
    'Toolkit "kit" in "/one/kit/toolkit.ts" is refused: the name is taken by MCP server "kit"',
  ]);
});

Deno.test("buildSnapshot() names a crowded folder's second toolkit with its own file", () => {
  // The folder is already broken ("a" defined twice) when "b" joins it.
  const snap = buildSnapshot([
    mod("/s/kits/a1.ts", [{ kind: "toolkit", name: "a" }]),
    mod("/s/kits/a2.ts", [{ kind: "toolkit", name: "a" }]),
    mod("/s/kits/b.ts", [{ kind: "toolkit", name: "b" }]),
  ]);
  const crowded = snap.errors.filter((e) => /holds/.test(e.message));
  assert.deepEqual(crowded, [{
    path: "/s/kits/b.ts",
    name: "b",
    message:
      'Folder "/s/kits" holds two toolkits "a" and "b": its tools need an explicit "toolkit" field',
  }]);
});

Deno.test("buildSnapshot() counts every toolkit of a crowded folder", () => {
  const snap = buildSnapshot([
    mod("/s/kits/a.ts", [{ kind: "toolkit", name: "a" }]),
    mod("/s/kits/b.ts", [{ kind: "toolkit", name: "b" }]),
    mod("/s/kits/c.ts", [{ kind: "toolkit", name: "c" }]),
  ]);
  assert.deepEqual(snap.errors.map((e) => [e.path, e.name, e.message]), [[
    "/s/kits/b.ts",
    "b",
    'Folder "/s/kits" holds 3 toolkits "a", "b" and "c": its tools need an explicit "toolkit" field',
  ]]);
});

Deno.test("buildSnapshot() refuses a drop-in named in an imported server's namespace, listed or not", () => {
  const server = (name: string, tools: string[]) => ({
    ...mod(`/mcp:/${name}`, [
      { kind: "toolkit", name, export: "kit" },
      ...tools.map((t) => ({
        name: `${name}__${t}`,
        export: t,
        fields: { toolkit: name },
      })),
    ]),
    origin: "mcp" as const,
    root: "/mcp:/",
  });
  const dropIns = [
    // The server does not list "send" (yet): served now, it would be taken
    // over the moment the server starts listing it.
    mod("/s/send.ts", [{ name: "kit__send" }]),
    mod("/s/read.ts", [{ name: "kit__read" }]),
    mod("/s/deep.ts", [{ name: "kit__sub__x" }]),
    mod("/s/skill.ts", [{ kind: "skill", name: "kit__howto" }]),
    mod("/s/kit.ts", [{ kind: "toolkit", name: "kit__more" }]),
    mod("/s/plain.ts", [{ name: "kitten__x" }]),
  ];
  const snap = buildSnapshot([
    server("kit", ["read"]),
    server("kit__sub", []),
    ...dropIns,
  ]);
  assert.equal(snap.tools.has("kit__send"), false);
  assert.equal(snap.tools.get("kit__read")?.origin, "mcp");
  assert.equal(snap.tools.has("kit__sub__x"), false);
  assert.equal(snap.skills.has("kit__howto"), false);
  assert.equal(snap.toolkits.has("kit__more"), false);
  assert.equal(snap.tools.get("kitten__x")?.origin, "file");
  const reasons = snap.refused.map((r) => r.reason).sort();
  assert.deepEqual(reasons, [
    'Skill "kit__howto" in "/s/skill.ts" is refused: its name is in the namespace of the MCP server "kit" ("kit__"), whose names are the server\'s',
    'Tool "kit__read" in "/s/read.ts" is refused: its name is in the namespace of the MCP server "kit" ("kit__"), whose names are the server\'s',
    'Tool "kit__send" in "/s/send.ts" is refused: its name is in the namespace of the MCP server "kit" ("kit__"), whose names are the server\'s',
    'Tool "kit__sub__x" in "/s/deep.ts" is refused: its name is in the namespace of the MCP server "kit__sub" ("kit__sub__"), whose names are the server\'s',
    'Toolkit "kit__more" in "/s/kit.ts" is refused: its name is in the namespace of the MCP server "kit" ("kit__"), whose names are the server\'s',
  ]);
  // The same refusal whether the server lists the name or not: nothing
  // changes hands when a server's listing changes.
  const later = buildSnapshot([server("kit", ["read", "send"]), ...dropIns], {
    previous: snap,
  });
  assert.equal(later.tools.get("kit__send")?.origin, "mcp");
  assert.ok(later.refused.some((r) => r.path === "/s/send.ts"));
});

Deno.test("buildSnapshot() loads a toolkit whose config schema refers to itself from several places", () => {
  // Its secrets are found by walking a configuration with it, each schema
  // node once per value (see secretValues), so nothing here is refused.
  const loop = { properties: { a: { $ref: "#" }, b: { $ref: "#" } } };
  const snap = buildSnapshot([
    mod("/s/loop/toolkit.ts", [{
      kind: "toolkit",
      name: "loop",
      fields: { config: loop },
    }]),
  ]);
  assert.equal(snap.toolkits.has("loop"), true);
  assert.deepEqual(snap.errors, []);
});

Deno.test("buildSnapshot() refuses a tool whose schema applies too many subschemas to one value", () => {
  // 30 definitions, each "anyOf" the one before twice: every value is
  // checked against 2^30 subschemas, on the host's thread.
  const defs: Record<string, unknown> = { l0: { type: "string" } };
  for (let i = 1; i <= 30; i++) {
    const ref = { $ref: `#/$defs/l${i - 1}` };
    defs[`l${i}`] = { anyOf: [ref, { ...ref }] };
  }
  const doubling = {
    $defs: defs,
    type: "object",
    properties: { x: { $ref: "#/$defs/l30" } },
  };
  // A recursive schema that consumes the value as it recurses is fine.
  const tree = {
    type: "object",
    properties: {
      left: { $ref: "#" },
      right: { $ref: "#" },
      value: { anyOf: [{ type: "number" }, { type: "string" }] },
    },
  };
  const snap = buildSnapshot([
    mod("/s/bomb.ts", [{ name: "bomb", fields: { input: doubling } }]),
    mod("/s/out.ts", [{ name: "out", fields: { output: doubling } }]),
    mod("/s/loop.ts", [{
      name: "loop",
      fields: { input: { anyOf: [{ $ref: "#" }] } },
    }]),
    mod("/s/tree.ts", [{ name: "tree", fields: { input: tree } }]),
    mod("/s/kit/toolkit.ts", [{
      kind: "toolkit",
      name: "kit",
      fields: { config: doubling },
    }]),
  ]);
  assert.deepEqual([...snap.tools.keys()], ["tree"]);
  assert.equal(snap.toolkits.size, 0);
  assert.deepEqual(snap.errors.map((e) => e.message), [
    'Cannot load tool "bomb" from "/s/bomb.ts": its "input" schema applies more than 1000 subschemas to one value ("anyOf", "allOf", "oneOf", "$ref", ... nested)',
    'Cannot load toolkit "kit" from "/s/kit/toolkit.ts": its "config" schema applies more than 1000 subschemas to one value ("anyOf", "allOf", "oneOf", "$ref", ... nested)',
    'Cannot load tool "loop" from "/s/loop.ts": its "input" schema applies more than 1000 subschemas to one value ("anyOf", "allOf", "oneOf", "$ref", ... nested)',
    'Cannot load tool "out" from "/s/out.ts": its "output" schema applies more than 1000 subschemas to one value ("anyOf", "allOf", "oneOf", "$ref", ... nested)',
  ]);
});

Deno.test("buildSnapshot() gives a folder named like '..x' its own toolkit's tools", () => {
  const snap = buildSnapshot([
    mod("/s/..fs/toolkit.ts", [{ kind: "toolkit", name: "fs" }]),
    mod("/s/..fs/read.ts", [{ name: "read" }]),
    mod("/s/web.ts", [{
      kind: "toolkit",
      name: "web",
      fields: { tools: ["read"] },
    }]),
  ]);
  // The folder is inside the skills folder: its tool is its toolkit's,
  // and another toolkit's list cannot take it.
  assert.equal(snap.tools.get("read")?.toolkit, "fs");
  assert.deepEqual(snap.toolkits.get("web")?.tools, []);
});

Deno.test("buildSnapshot() lets a toolkit at the top of a skills folder at / list its loose tools", () => {
  const top = (path: string, defs: Partial<DescribedDefinition>[]) => ({
    ...mod(path, defs),
    root: "/",
  });
  const snap = buildSnapshot([
    top("/web.ts", [{
      kind: "toolkit",
      name: "web",
      fields: { tools: ["get"] },
    }]),
    top("/get.ts", [{ name: "get" }]),
    top("/kit/toolkit.ts", [{ kind: "toolkit", name: "kit" }]),
    top("/kit/read.ts", [{ name: "read" }]),
  ]);
  // As under any other skills folder: "/get.ts" is in the tree of "/".
  assert.equal(snap.tools.get("get")?.toolkit, "web");
  assert.equal(snap.tools.get("read")?.toolkit, "kit");
  assert.deepEqual(snap.refused, []);
});

Deno.test("buildSnapshot() gives a tool no toolkit of another skills folder or origin in its folder", () => {
  const snap = buildSnapshot([
    mod("/s/sub/kit/toolkit.ts", [{ kind: "toolkit", name: "kit" }]),
    { ...mod("/s/sub/kit/read.ts", [{ name: "read" }]), root: "/s/sub" },
    {
      ...mod("/s/sub/kit/list.ts", [{ name: "list" }]),
      origin: "builtin" as const,
    },
  ]);
  assert.equal(snap.tools.get("read")?.toolkit, null);
  assert.equal(snap.tools.get("list")?.toolkit, null);
  assert.deepEqual(snap.toolkits.get("kit")?.tools, []);
});

Deno.test("buildSnapshot() refuses a schema nested too deep to walk and serves the rest", () => {
  // 3,000 levels: JSON and a Worker's message carry it, but a walk of the
  // host's (the fan-out and pattern checks, the validator) overflows the
  // stack on it.
  let deep: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < 3000; i++) {
    deep = { type: "object", properties: { a: deep } };
  }
  const snap = buildSnapshot([
    mod("/s/deep.ts", [{ name: "deep", fields: { input: deep } }]),
    mod("/s/kit/toolkit.ts", [{
      kind: "toolkit",
      name: "kit",
      fields: { config: deep },
    }]),
    mod("/s/ok.ts", [{ name: "ok" }]),
  ]);
  assert.deepEqual([...snap.tools.keys()], ["ok"]);
  assert.equal(snap.toolkits.size, 0);
  assert.deepEqual(snap.errors.map((e) => e.message), [
    'Cannot load tool "deep" from "/s/deep.ts": its "input" schema is nested too deep to check',
    'Cannot load toolkit "kit" from "/s/kit/toolkit.ts": its "config" schema is nested too deep to check',
  ]);
});

Deno.test("buildSnapshot() checks a described schema once, however many snapshots are built from it", () => {
  // The registry builds every reload's snapshot from the modules it keeps,
  // and checking a schema compiles its patterns, about 10 µs a character
  // on the host's thread: 240 KB of them cost 1 to 2 s at every reload,
  // whoever's edit caused it. Each read of this node is one walk of it.
  let reads = 0;
  const node = { type: "string" };
  Object.defineProperty(node, "pattern", {
    get: () => (reads++, "^a+$"),
    enumerable: true,
  });
  const input = { type: "object", properties: { a: node } };
  const kitConfig = { type: "object", properties: { a: node } };
  const modules = [
    mod("/s/kit/toolkit.ts", [{
      kind: "toolkit",
      name: "kit",
      fields: { config: kitConfig },
    }]),
    mod("/s/kit/t.ts", [{ name: "t", fields: { input } }]),
  ];
  let snap = buildSnapshot(modules);
  assert.deepEqual(snap.errors, []);
  const once = reads;
  assert.ok(once > 0);
  for (let i = 1; i <= 3; i++) {
    snap = buildSnapshot(modules, { previous: snap, generation: i });
  }
  assert.equal(reads, once);
  assert.equal(snap.tools.get("t")?.toolkit, "kit");
});
