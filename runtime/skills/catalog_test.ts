import assert from "node:assert/strict";
import { join } from "node:path";
import type { RegistrySnapshot, SkillEntry } from "../registry/types.ts";
import { registryCatalog } from "./catalog.ts";
import { resolveSkillStatus, type SkillRecord } from "./definition.ts";

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
