import assert from "node:assert/strict";
import { join } from "node:path";
import type { RegistrySnapshot, SkillEntry } from "../registry/types.ts";
import { registryCatalog } from "./catalog.ts";
import { resolveSkillStatus } from "./skill_status.ts";
import type { SkillRecord } from "./skill_record.ts";

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
