import assert from "node:assert/strict";
import {
  argumentNames,
  failedSkillRecord,
  redactedChoice,
  skill,
} from "./skill_record.ts";
import { resolveSkillStatus } from "./skill_status.ts";

const has = (names: string[]) => (n: string) => names.includes(n);

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
