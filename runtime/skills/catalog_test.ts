import assert from "node:assert/strict";
import { join } from "node:path";
import type { RegistrySnapshot, SkillEntry } from "../registry/types.ts";
import {
  argumentNames,
  codeSkillRecord,
  failedSkillRecord,
  instructionSkillRecord,
  redactedChoice,
  registryCatalog,
  resolveSkillStatus,
  skill,
  type SkillRecord,
  skillSource,
} from "./catalog.ts";
import { parseSkillMd } from "./skill_md.ts";

// The status a client would see: the catalog's record, resolved.
const resolved = (record: SkillRecord | undefined) =>
  record &&
  resolveSkillStatus(record, {
    hasTool: () => true,
    hasToolkit: () => true,
    archived: new Set(),
  });

function codeEntry(
  name: string,
  path: string,
  permissions: SkillEntry["permissions"] = {},
): SkillEntry {
  return {
    kind: "skill",
    name,
    fields: { description: `The ${name} skill` },
    permissions,
    runnable: true,
    path,
    export: "default",
    hash: "h",
    origin: "file",
  };
}

function snapshot(
  skills: SkillEntry[],
  agentSkills: string[] = [],
): RegistrySnapshot {
  return {
    generation: 1,
    tools: new Map(),
    toolkits: new Map(),
    skills: new Map(skills.map((s) => [s.name, s])),
    blocked: new Map(),
    agentSkills,
    errors: [],
    refused: [],
    roots: [],
  };
}

Deno.test("registryCatalog() serves neither of a module and a folder of the same name", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(dir, "SKILL.md"),
      "---\nname: notes\ndescription: Notes\n---\nBe brief.",
    );
    const catalog = registryCatalog({
      registry: {
        snapshot: snapshot([codeEntry("notes", "/s/notes.ts")], [dir]),
      },
      home: null,
    });
    const skills = await catalog.skills();
    assert.equal(skills.length, 1);
    const skill = resolved(skills[0]);
    assert.equal(skill?.status, "Blocked");
    assert.match(
      String(skill?.metadata?.blocked_reason),
      /is defined in .* neither is served/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("registryCatalog() blocks a code skill asking for more than the policy grants, naming it", async () => {
  const catalog = registryCatalog({
    registry: {
      snapshot: snapshot([
        codeEntry("fetcher", "/s/fetcher.ts", { net: ["evil.example"] }),
        codeEntry("dynamic", "/s/dynamic.ts", "dynamic"),
      ]),
    },
    policy: {},
    home: null,
  });
  const byName = new Map(
    (await catalog.skills()).map((r) => [r.definition.name, resolved(r)]),
  );
  assert.equal(byName.get("fetcher")?.status, "Blocked");
  assert.match(
    String(byName.get("fetcher")?.metadata?.blocked_reason),
    /evil\.example/,
  );
  assert.equal(byName.get("dynamic")?.status, "Blocked");
  assert.match(
    String(byName.get("dynamic")?.metadata?.blocked_reason),
    /computes its permissions from configuration/,
  );
});

Deno.test("registryCatalog() gives a SKILL.md name to the shipped folder, then the holder", async () => {
  const system = await Deno.makeTempDir();
  const ops = await Deno.makeTempDir();
  const write = async (dir: string, folder: string, description: string) => {
    await Deno.mkdir(join(dir, folder));
    await Deno.writeTextFile(
      join(dir, folder, "SKILL.md"),
      `---\nname: todos\ndescription: ${description}\n---\nDo it.`,
    );
    return join(dir, folder);
  };
  try {
    const shipped = await write(system, "todos", "Shipped");
    const fake = await write(ops, "todos_fake", "Impostor");
    const snap = {
      ...snapshot([], [fake, shipped]),
      roots: [
        { path: system, origin: "builtin" as const },
        { path: ops, origin: "file" as const },
      ],
    };
    const catalog = registryCatalog({
      registry: { snapshot: snap },
      home: null,
      systemDirs: [system],
    });
    const skills = await catalog.skills();
    assert.equal(skills.length, 1);
    assert.equal(resolved(skills[0])?.status, "Published");
    assert.equal(skills[0]?.definition.description, "Shipped");
    const [refused] = catalog.refused?.() ?? [];
    assert.match(
      refused?.reason ?? "",
      /^Skill "todos" in ".*todos_fake.*" is refused: the name is taken by builtin ".*todos\/SKILL\.md"$/,
    );
    // Within one folder, the holder keeps the name against a newcomer.
    const mine = await write(ops, "z_todos", "Mine");
    const live = { snapshot: { ...snapshot([], [mine]), roots: snap.roots } };
    const own = registryCatalog({
      registry: live,
      home: null,
      systemDirs: [system],
    });
    await own.skills();
    const late = await write(ops, "a_todos", "Late");
    live.snapshot = { ...snapshot([], [late, mine]), roots: snap.roots };
    const now = await own.skills();
    assert.equal(now[0]?.definition.description, "Mine");
    assert.match(own.refused?.()[0]?.path ?? "", /a_todos/);
    // A fresh catalog has no holder: equal standing blocks the name.
    const fresh = registryCatalog({
      registry: live,
      home: null,
      systemDirs: [system],
    });
    assert.equal(resolved((await fresh.skills())[0])?.status, "Blocked");
  } finally {
    await Deno.remove(system, { recursive: true });
    await Deno.remove(ops, { recursive: true });
  }
});

Deno.test("registryCatalog() ranks skills folders by their place, also past the tenth", async () => {
  // Eleven folders, the same name in the third and the eleventh: config
  // order decides, as numbers ("10" must not sort before "2").
  const base = await Deno.makeTempDir();
  try {
    const roots = [];
    for (let i = 0; i < 11; i++) {
      const dir = join(base, `root${i}`);
      await Deno.mkdir(dir);
      roots.push({ path: dir, origin: "file" as const });
    }
    const folders = [];
    for (const i of [10, 2]) {
      const folder = join(roots[i]!.path, "todos");
      await Deno.mkdir(folder);
      await Deno.writeTextFile(
        join(folder, "SKILL.md"),
        `---\nname: todos\ndescription: From folder ${i}\n---\nDo it.`,
      );
      folders.push(folder);
    }
    const catalog = registryCatalog({
      registry: { snapshot: { ...snapshot([], folders), roots } },
      home: null,
      systemDirs: [],
    });
    const skills = await catalog.skills();
    assert.equal(skills.length, 1);
    assert.equal(skills[0]?.definition.description, "From folder 2");
    assert.equal(resolved(skills[0])?.status, "Published");
    assert.match(catalog.refused?.()[0]?.path ?? "", /root10/);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

const has = (names: string[]) => (n: string) => names.includes(n);

Deno.test("codeSkillRecord() fills every field from the module's fields", () => {
  const rec = codeSkillRecord({
    path: "/skills/a/a.ts",
    export: "default",
    hash: "abc",
    name: "a",
    runnable: true,
    fields: {
      description: "A",
      version: "2.0.0",
      triggers: ["do a"],
      when_to_use: "w",
      argument_hint: "h",
      tools: ["t"],
      toolkits: ["k"],
      instructions: "i",
      category: "c",
      tags: ["x"],
      max_turns: 3,
      timeout_seconds: 9,
      icon: "i.svg",
      metadata: { owner: "me" },
      input_schema: { type: "object", properties: { p: { type: "string" } } },
      output_schema: { type: "string" },
      isolation: "per-call",
    },
  }, { source: "project", grant: { read: ["/skills/a"] } });
  const d = rec.definition;
  assert.deepEqual(
    [
      d.name,
      d.version,
      d.description,
      d.whenToUse,
      d.argumentHint,
      d.source,
      d.filePath,
    ],
    ["a", "2.0.0", "A", "w", "h", "project", "/skills/a/a.ts"],
  );
  assert.deepEqual(d.triggers, ["do a"]);
  assert.deepEqual([d.tools, d.toolkits, d.tags], [["t"], ["k"], ["x"]]);
  assert.deepEqual([d.maxTurns, d.timeoutSeconds, d.category, d.icon], [
    3,
    9,
    "c",
    "i.svg",
  ]);
  assert.deepEqual(d.arguments, ["p"]);
  assert.deepEqual(d.metadata, { owner: "me", format: "code" });
  assert.deepEqual(rec.run, {
    format: "code",
    path: "/skills/a/a.ts",
    export: "default",
    version: "abc",
    grant: { read: ["/skills/a"] },
    isolation: "per-call",
  });
});

Deno.test("a code module with instructions and no run is an instruction skill", () => {
  const rec = codeSkillRecord({
    path: "/s/i.ts",
    export: "default",
    hash: "h",
    name: "i",
    runnable: false,
    fields: { description: "I", instructions: "Do things" },
  }, { source: "system" });
  assert.equal(rec.run?.format, "instructions");
  const none = codeSkillRecord({
    path: "/s/n.ts",
    export: "default",
    hash: "h",
    name: "n",
    runnable: false,
    fields: { description: "N" },
  }, { source: "system" });
  const def = resolveSkillStatus(none, {
    hasTool: has([]),
    hasToolkit: has([]),
  });
  assert.equal(def.status, "Blocked");
  assert.match(
    String(def.metadata?.blocked_reason),
    /neither "run" nor "instructions"/,
  );
});

Deno.test("codeSkillRecord() keeps an llm_config's credentials out of what agents discover", () => {
  const rec = codeSkillRecord({
    path: "/s/l.ts",
    export: "default",
    hash: "h",
    name: "l",
    runnable: true,
    fields: {
      description: "L",
      llm_config: {
        provider_name: "openai",
        provider_credentials: { api_key: "sk-secret" },
        provider_config: {
          model: "m",
          base_url: "https://u:pw@llm.example/v1",
        },
        is_default: true,
      },
    },
  }, { source: "project" });
  assert.deepEqual(rec.llmConfig?.providerCredentials, {
    api_key: "sk-secret",
  });
  assert.equal(rec.llmConfig?.isDefault, false);
  assert.deepEqual(rec.definition.llmConfig?.providerCredentials, {});
  assert.doesNotMatch(JSON.stringify(rec.definition), /sk-secret|pw@/);
  const bad = codeSkillRecord({
    path: "/s/b.ts",
    export: "default",
    hash: "h",
    name: "b",
    runnable: true,
    fields: { description: "B", llm_config: { provider_name: 7 } },
  }, { source: "project" });
  assert.equal(bad.llmConfig, null);
  assert.equal(bad.definition.llmConfig, null);
});

Deno.test("instructionSkillRecord() fills the skill from its SKILL.md", () => {
  const manifest = parseSkillMd(
    "---\nname: notes\ndescription: Takes notes\nmax_turns: 4\ntags: [a]\n" +
      "env: [API_TOKEN]\nnet: [api.example.com]\n" +
      "input_schema:\n  type: object\n  properties:\n    topic: {type: string}\n---\nBe brief.",
  );
  const rec = instructionSkillRecord(
    {
      ...manifest,
      folder: "/s/notes",
      file_path: "/s/notes/SKILL.md",
      resources: ["ref.md"],
    },
    { source: "user" },
  );
  const d = rec.definition;
  assert.deepEqual(
    [d.name, d.description, d.instructions, d.filePath, d.source, d.maxTurns],
    ["notes", "Takes notes", "Be brief.", "/s/notes/SKILL.md", "user", 4],
  );
  assert.deepEqual(d.tags, ["a"]);
  assert.deepEqual(d.arguments, ["topic"]);
  assert.equal(d.metadata?.format, "agent_skill");
  assert.deepEqual(d.metadata?.resources, ["ref.md"]);
  assert.deepEqual(rec.run, {
    format: "instructions",
    folder: "/s/notes",
    resources: ["ref.md"],
    commandRules: manifest.command_rules,
    env: ["API_TOKEN"],
    net: ["api.example.com"],
  });
  assert.equal(rec.loadProblem, null);
});

Deno.test("instructionSkillRecord() keeps the llm choice's key for the host only", () => {
  const manifest = parseSkillMd(
    "---\nname: n\ndescription: d\nllm:\n  provider_name: openai\n" +
      "  provider_credentials: {api_key: sk-hidden}\n  provider_config: {model: m}\n---\nx",
  );
  const rec = instructionSkillRecord(
    { ...manifest, folder: "/s/n", file_path: "/s/n/SKILL.md", resources: [] },
    { source: "project" },
  );
  assert.equal(rec.llmConfig?.providerName, "openai");
  assert.deepEqual(rec.llmConfig?.providerCredentials, {
    api_key: "sk-hidden",
  });
  assert.deepEqual(rec.definition.llmConfig?.providerCredentials, {});
  assert.deepEqual(rec.definition.llmConfig?.providerConfig, { model: "m" });
  assert.doesNotMatch(JSON.stringify(rec.definition), /sk-hidden/);
});

Deno.test("failedSkillRecord() is Blocked and never runnable", () => {
  const rec = failedSkillRecord("broken", {
    path: "/s/broken/SKILL.md",
    message: "YAML error at line 2: bad",
    source: "project",
  });
  assert.equal(rec.run, null);
  const d = resolveSkillStatus(rec, { hasTool: has([]), hasToolkit: has([]) });
  assert.equal(d.status, "Blocked");
  assert.equal(d.filePath, "/s/broken/SKILL.md");
});

Deno.test("skill() fills A2E's defaults and keeps what it is given", () => {
  const s = skill({ name: "a", description: "A", maxTurns: 4 });
  assert.deepEqual(
    [s.version, s.status, s.source, s.whenToUse, s.tools, s.maxTurns],
    ["1.0.0", "Published", "system", "", null, 4],
  );
  assert.deepEqual([s.inputSchema, s.outputSchema], [{}, {}]);
});

Deno.test("redactedChoice() drops credentials and private provider settings", () => {
  const r = redactedChoice({
    providerName: "anthropic",
    providerCredentials: { api_key_env: "KEY" },
    providerConfig: { model: "m", api_key: "inline", headers: { x: "y" } },
    isDefault: true,
  });
  assert.deepEqual(r, {
    providerName: "anthropic",
    providerCredentials: {},
    providerConfig: { model: "m" },
    isDefault: true,
  });
});

Deno.test("argumentNames() reads properties only from an object", () => {
  assert.deepEqual(argumentNames({ properties: { x: {}, y: {} } }), ["x", "y"]);
  assert.equal(argumentNames({ properties: ["x"] }), null);
  assert.equal(argumentNames({ properties: null }), null);
});

Deno.test("skillSource() tells system, user and project apart", async (t) => {
  await t.step("builtin is system wherever it is", () => {
    assert.equal(
      skillSource("/home/ann/x.ts", { origin: "builtin", home: "/home/ann" }),
      "system",
    );
  });
  await t.step("under the home directory is user", () => {
    assert.equal(
      skillSource("/home/ann/.skillbox/skills/a", {
        origin: "file",
        home: "/home/ann",
      }),
      "user",
    );
  });
  await t.step(
    "the home directory itself, a sibling and an escape are project",
    () => {
      for (
        const path of [
          "/home/ann",
          "/home/anna/s/a.ts",
          "/home/ann/../bob/a.ts",
        ]
      ) {
        assert.equal(
          skillSource(path, { origin: "file", home: "/home/ann" }),
          "project",
          path,
        );
      }
    },
  );
  await t.step("no home directory: project", () => {
    assert.equal(
      skillSource("/x/a.ts", { origin: "file", home: null }),
      "project",
    );
  });
});

Deno.test("resolveSkillStatus() decides Published, Blocked and Archived", async (t) => {
  const manifest = parseSkillMd(
    "---\nname: s\ndescription: d\ntools: [grep]\ntoolkits: [filesystem]\n---\nx",
  );
  const rec = instructionSkillRecord(
    { ...manifest, folder: "/f", file_path: "/f/SKILL.md", resources: [] },
    { source: "user" },
  );
  await t.step("Published when every tool and toolkit is loaded", () => {
    const d = resolveSkillStatus(rec, {
      hasTool: has(["grep"]),
      hasToolkit: has(["filesystem"]),
    });
    assert.equal(d.status, "Published");
    assert.equal(d.metadata?.blocked_reason, undefined);
  });
  await t.step("Blocked naming what is missing", () => {
    const d = resolveSkillStatus(rec, {
      hasTool: has([]),
      hasToolkit: has(["filesystem"]),
    });
    assert.equal(d.status, "Blocked");
    assert.equal(
      d.metadata?.blocked_reason,
      'Skill "s" needs tool "grep", which is not loaded',
    );
  });
  await t.step("Archived wins", () => {
    const d = resolveSkillStatus(rec, {
      hasTool: has([]),
      hasToolkit: has([]),
      archived: new Set(["s"]),
    });
    assert.equal(d.status, "Archived");
  });
  await t.step("a policy denial blocks with the permission named", () => {
    const denied = codeSkillRecord({
      path: "/s/x.ts",
      export: "default",
      hash: "h",
      name: "x",
      runnable: true,
      fields: { description: "X" },
    }, {
      source: "project",
      denied: 'Permission "net" for "evil.example" exceeds the host policy',
    });
    const d = resolveSkillStatus(denied, {
      hasTool: has([]),
      hasToolkit: has([]),
    });
    assert.equal(d.status, "Blocked");
    assert.match(
      String(d.metadata?.blocked_reason),
      /"net" for "evil.example"/,
    );
  });
});

Deno.test("resolveSkillStatus() names every missing tool and toolkit, and drops a stale reason", () => {
  const rec = codeSkillRecord({
    path: "/s/m.ts",
    export: "default",
    hash: "h",
    name: "m",
    runnable: true,
    fields: {
      description: "M",
      tools: ["a", "b"],
      toolkits: ["k"],
      metadata: { blocked_reason: "forged by the author" },
    },
  }, { source: "project" });
  const blocked = resolveSkillStatus(rec, {
    hasTool: has([]),
    hasToolkit: has([]),
  });
  assert.equal(
    blocked.metadata?.blocked_reason,
    'Skill "m" needs tools "a", "b" and toolkit "k", which are not loaded',
  );
  const ok = resolveSkillStatus(rec, {
    hasTool: has(["a", "b"]),
    hasToolkit: has(["k"]),
  });
  assert.equal(ok.status, "Published");
  assert.equal(ok.metadata?.blocked_reason, undefined);
});

Deno.test("codeSkillRecord() takes max_turns only as a whole number, as SKILL.md does", () => {
  const turns = (max_turns: unknown) =>
    codeSkillRecord({
      path: "/s/t.ts",
      export: "default",
      hash: "h",
      name: "t",
      runnable: true,
      fields: { description: "T", max_turns, timeout_seconds: 2.5 },
    }, { source: "system" }).definition;
  // 2.5 turns allowed a third; it is ignored as any invalid value is.
  assert.equal(turns(2.5).maxTurns, null);
  assert.equal(turns(3).maxTurns, 3);
  // A timeout may be a fraction of a second.
  assert.equal(turns(3).timeoutSeconds, 2.5);
});

Deno.test("registryCatalog() forgets a folder the registry no longer lists", async () => {
  // Its cache kept every folder ever loaded: a removed one stayed in
  // memory for the host's life, and came back as it was then.
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "SKILL.md");
    const write = async (description: string) => {
      await Deno.writeTextFile(
        file,
        `---\nname: notes\ndescription: ${description}\n---\nBe brief.`,
      );
      await Deno.utime(file, 1_700_000_000, 1_700_000_000);
    };
    await write("One");
    const registry = { snapshot: snapshot([], [dir]) };
    const catalog = registryCatalog({ registry, home: null });
    assert.equal((await catalog.skills())[0]?.definition.description, "One");
    registry.snapshot = snapshot([], []);
    assert.deepEqual(await catalog.skills(), []);
    // Same size, same mtime: only a fresh read tells the two apart.
    await write("Two");
    registry.snapshot = snapshot([], [dir]);
    assert.equal((await catalog.skills())[0]?.definition.description, "Two");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("registryCatalog() rebuilds a folder's record when its SKILL.md changes, broken or mended", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "SKILL.md");
    const write = async (frontmatter: string, mtime: number) => {
      await Deno.writeTextFile(file, `---\n${frontmatter}\n---\nBe brief.`);
      await Deno.utime(file, mtime, mtime);
    };
    const registry = { snapshot: snapshot([], [dir]) };
    const catalog = registryCatalog({ registry, home: null });
    const now = async () => resolved((await catalog.skills())[0]);
    await write("name: notes\ndescription: One", 1_700_000_000);
    assert.equal((await now())?.description, "One");
    // Same size, a later mtime.
    await write("name: notes\ndescription: Two", 1_700_000_100);
    assert.equal((await now())?.description, "Two");
    await write("name: notes\ndescription: [Two", 1_700_000_200);
    const broken = await now();
    assert.equal(broken?.status, "Blocked");
    assert.match(String(broken?.metadata?.blocked_reason), /YAML error/);
    await write("name: notes\ndescription: Three", 1_700_000_300);
    assert.equal((await now())?.status, "Published");
    assert.equal((await now())?.description, "Three");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a folder that cannot be loaded is listed under a printable name", () => {
  // Its folder's name is all there is to call it by, and clients show it:
  // a bidi override or a line break in it would make the list read as
  // another. A Blocked skill is never run, so no caller needs the raw name.
  const record = failedSkillRecord("bad\u202eevil\nskill", {
    path: "/s/x/SKILL.md",
    message: "no frontmatter",
    source: "project",
  });
  assert.equal(record.definition.name, "bad\\u202eevil\\u000askill");
});

Deno.test("codeSkillRecord() reads llm_config as a SKILL.md's llm is read", () => {
  const llm = (llm_config: unknown) =>
    codeSkillRecord({
      path: "/s/l.ts",
      export: "default",
      hash: "h",
      name: "l",
      runnable: true,
      fields: { description: "L", llm_config },
    }, { source: "project" }).llmConfig;
  const md = (llm: string) =>
    parseSkillMd(`---\nname: l\ndescription: L\nllm: ${llm}\n---\n`).llm;
  // An empty provider name names no provider: the host's default is used.
  assert.equal(md("{provider_name: ''}"), null);
  assert.equal(llm({ provider_name: "" }), null);
  // A provider's name alone is the shorthand for it.
  assert.equal(md("anthropic")?.provider_name, "anthropic");
  assert.deepEqual(llm("anthropic"), {
    providerName: "anthropic",
    providerCredentials: {},
    providerConfig: {},
    isDefault: false,
  });
});

Deno.test("codeSkillRecord() reads its fields as a SKILL.md's are read", () => {
  const fields = {
    description: "F",
    tags: "data, csv",
    version: 2,
    "max-turns": 4,
  };
  const code = codeSkillRecord({
    path: "/s/f.ts",
    export: "default",
    hash: "h",
    name: "f",
    runnable: true,
    fields,
  }, { source: "project" }).definition;
  const md = parseSkillMd(
    "---\nname: f\ndescription: F\ntags: data, csv\nversion: 2\nmax-turns: 4\n---\n",
  );
  assert.deepEqual(md.tags, ["data", "csv"]);
  assert.deepEqual(
    [code.tags, code.version, code.maxTurns],
    [md.tags, md.version, md.max_turns],
  );
});

Deno.test("codeSkillRecord() keeps a module's tool names as written, not as other runtimes' names", () => {
  // A module names skillbox's tools: "Read" is not read_file there, and a
  // name no tool has keeps the skill Blocked rather than vanishing.
  const code = codeSkillRecord({
    path: "/s/t.ts",
    export: "default",
    hash: "h",
    name: "t",
    runnable: true,
    fields: { description: "T", tools: ["Read", "mcp__x__y"] },
  }, { source: "project" }).definition;
  assert.deepEqual(code.tools, ["Read", "mcp__x__y"]);
});
