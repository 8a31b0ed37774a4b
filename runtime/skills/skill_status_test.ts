import assert from "node:assert/strict";
import { codeSkillRecord } from "./code_skill.ts";
import { instructionSkillRecord } from "./instruction_skill.ts";
import { resolveSkillStatus } from "./skill_status.ts";
import { parseSkillMd } from "./skill_md.ts";

const has = (names: string[]) => (n: string) => names.includes(n);

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
