import assert from "node:assert/strict";
import {
  codeSkillRecord,
  failedSkillRecord,
  instructionSkillRecord,
  resolveSkillStatus,
} from "./definition.ts";
import { parseSkillMd } from "./skill_md.ts";

const has = (names: string[]) => (n: string) => names.includes(n);

Deno.test("codeSkillRecord() fills every wire field from the module's fields", () => {
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
      d.when_to_use,
      d.argument_hint,
      d.source,
      d.file_path,
    ],
    ["a", "2.0.0", "A", "w", "h", "project", "/skills/a/a.ts"],
  );
  assert.deepEqual(d.triggers, ["do a"]);
  assert.deepEqual([d.tools, d.toolkits, d.tags], [["t"], ["k"], ["x"]]);
  assert.deepEqual([d.max_turns, d.timeout_seconds, d.category, d.icon], [
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

Deno.test("resolveSkillStatus() decides Published, Blocked, Archived and Created", async (t) => {
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
  await t.step("Created while pending", () => {
    const d = resolveSkillStatus(rec, {
      hasTool: has([]),
      hasToolkit: has([]),
      pending: new Set(["s"]),
    });
    assert.equal(d.status, "Created");
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

Deno.test("failedSkillRecord() is Blocked and never runnable", () => {
  const rec = failedSkillRecord("broken", {
    path: "/s/broken/SKILL.md",
    message: "YAML error at line 2: bad",
    source: "project",
  });
  assert.equal(rec.run, null);
  const d = resolveSkillStatus(rec, { hasTool: has([]), hasToolkit: has([]) });
  assert.equal(d.status, "Blocked");
  assert.equal(d.file_path, "/s/broken/SKILL.md");
});
