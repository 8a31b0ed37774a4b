import assert from "node:assert/strict";
import { instructionSkillRecord } from "./instruction_skill.ts";
import { parseSkillMd } from "./skill_md.ts";

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
