import assert from "node:assert/strict";
import { codeSkillRecord } from "./code_skill.ts";
import { resolveSkillStatus } from "./skill_status.ts";

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
