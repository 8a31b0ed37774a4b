/**
 * Skill scripts through the whole host built from a `skillbox.jsonc`: the
 * policy's `interpreters` and `permissions.env` reach the scripts.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createHost } from "../../runtime/host.ts";
import { parseConfig } from "../../runtime/config.ts";
import { startMockOpenAI } from "../support/mock_openai.ts";
import { connectA2e } from "../support/skills_host.ts";
import type { SkillResult } from "../../protocol/skill.ts";

const FIXTURES = fileURLToPath(
  new URL("../fixtures/skills/scripts/", import.meta.url),
);

Deno.test("policy.interpreters in skillbox.jsonc is checked at start", () => {
  assert.throws(
    () =>
      parseConfig(`{"policy": {"interpreters": {".py": "/usr/bin/python3"}}}`),
    /policy\.interpreters\.\.py: must be a program name/,
  );
  assert.throws(
    () => parseConfig(`{"policy": {"interpreters": {"py": "python3"}}}`),
    /"py" is not an extension/,
  );
});

Deno.test(
  "a script gets only the variables its skill declares and the policy grants (the refused ones noted in discovery and the banner), and an interpreter the policy turns off is refused to the model",
  { sanitizeOps: false, sanitizeResources: false },
  async () => {
    Deno.env.set("SKILLBOX_TEST_GRANTED", "granted-value");
    Deno.env.set("SKILLBOX_TEST_NOT_GRANTED", "host-secret");
    Deno.env.set("SKILLBOX_TEST_UNDECLARED", "other-secret");
    const mock = await startMockOpenAI([
      {
        tool_calls: [{
          name: "run_skill_script",
          arguments: { script: "scripts/show_env.sh" },
        }],
      },
      {
        tool_calls: [{
          name: "run_skill_script",
          arguments: { script: "scripts/report.py" },
        }],
      },
      { tokens: ["done"] },
    ]);
    const config = parseConfig(JSON.stringify({
      skills: [FIXTURES],
      builtin_skills: false,
      sandbox: { cache_dir: null },
      llm: [{
        provider_name: "openai",
        provider_credentials: { api_key: "test-key" },
        provider_config: { base_url: mock.url, model: "mock-model" },
        is_default: true,
      }],
      policy: {
        interpreters: { ".py": null },
        permissions: {
          env: ["SKILLBOX_TEST_GRANTED", "SKILLBOX_TEST_UNDECLARED"],
        },
      },
    }));
    const host = createHost({ config });
    try {
      const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
      // A declared variable the policy refuses is named in the banner...
      const refusal =
        'field "env": the policy (policy.permissions.env) does not grant "SKILLBOX_TEST_NOT_GRANTED": its scripts run without it';
      assert.ok(
        (await host.ready).warnings.some((w) => w.endsWith(refusal)),
      );
      const agent = await connectA2e(url.replace("http", "ws") + "/a2e");
      // ...and in discovery's metadata.
      const found = await agent.request({ type: "skill/discover/req" });
      const probe = (found.message.skills as {
        name: string;
        metadata: { warnings?: string[] };
      }[]).find((s) => s.name === "env-probe");
      assert.deepEqual(probe?.metadata.warnings, [refusal]);
      const resp = await agent.request({
        type: "skill/call/req",
        name: "env-probe",
        arguments: { task: "probe" },
        timeout: 30,
      });
      const result = resp.message.data as SkillResult;
      assert.equal(result.success, true, result.error ?? "");
      const fed = (i: number) =>
        (mock.requests[i]!.body.messages as { content: string }[]).at(-1)!
          .content;
      const shown = JSON.parse(fed(1));
      assert.equal(shown.exit_code, 0, shown.stderr_tail);
      const names = String(shown.stdout_tail).trim().split("\n").map((l) =>
        l.split("=")[0]
      );
      assert.deepEqual(names, [
        "HOME",
        "LANG",
        "PATH",
        "PWD",
        "SKILLBOX_TEST_GRANTED",
        "TMPDIR",
      ]);
      assert.match(shown.stdout_tail, /SKILLBOX_TEST_GRANTED=granted-value/);
      assert.doesNotMatch(shown.stdout_tail, /secret/);
      assert.match(
        fed(2),
        /Cannot run "scripts\/report\.py": the policy allows no interpreter for "\.py" files \(allowed: \.js, \.sh, \.ts\)/,
      );
      await agent.close();
    } finally {
      await host.close({ timeoutSeconds: 1 });
      await mock.close();
      for (const name of ["GRANTED", "NOT_GRANTED", "UNDECLARED"]) {
        Deno.env.delete(`SKILLBOX_TEST_${name}`);
      }
    }
  },
);
