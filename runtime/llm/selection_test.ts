import assert from "node:assert/strict";
import { hostDefault, selectLlmConfig } from "./selection.ts";
import type { LlmConfig } from "./config_check.ts";
import { SkillboxError } from "../../protocol/errors.ts";

const HOST: LlmConfig[] = [
  { provider_name: "openai", provider_config: { model: "a" } },
  {
    provider_name: "openai",
    provider_config: { model: "b" },
    is_default: true,
  },
  { provider_name: "anthropic", provider_config: { model: "c" } },
];

Deno.test("selectLlmConfig() prefers override, then skill, then host", () => {
  const override: LlmConfig = { provider_name: "anthropic" };
  const skill: LlmConfig = { provider_name: "openai" };
  assert.equal(selectLlmConfig(HOST, { override, skill }).chosen, override);
  assert.equal(selectLlmConfig(HOST, { skill }).chosen, skill);
  const fromHost = selectLlmConfig(HOST, {});
  assert.equal(fromHost.source, "llm");
  assert.equal(fromHost.chosen, HOST[1]);
  assert.equal(fromHost.hostEntry, HOST[1]);
});

Deno.test("selectLlmConfig() backs a caller's provider with the host's default entry for it", () => {
  const picked = selectLlmConfig(HOST, {
    override: { provider_name: "openai" },
  });
  assert.equal(picked.source, "llm_override");
  assert.equal(picked.provider, "openai");
  assert.equal(picked.hostEntry, HOST[1]); // is_default beats first listed
  const none = selectLlmConfig([HOST[2]!], {
    skill: { provider_name: "openai" },
  });
  assert.equal(none.hostEntry, undefined);
});

Deno.test("hostDefault() refuses to guess between several entries", () => {
  assert.throws(
    () => hostDefault([HOST[0]!, HOST[2]!]),
    (e: unknown) =>
      e instanceof SkillboxError && e.code === "skill_error" &&
      /2 entries and none sets "is_default"/.test(e.message),
  );
  assert.equal(hostDefault(HOST), HOST[1]);
});
