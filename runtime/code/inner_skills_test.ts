import assert from "node:assert/strict";
import { codeSkillRecord } from "../skills/catalog.ts";
import { innerSkillRunner } from "./inner_skills.ts";

Deno.test("innerSkillRunner() refuses an archived skill as skill/call/req does", async () => {
  const record = codeSkillRecord({
    path: "/s/a.ts",
    export: "default",
    hash: "h",
    name: "a",
    runnable: true,
    fields: { description: "A" },
  }, { source: "system" });
  const run = innerSkillRunner({
    catalog: { skills: () => Promise.resolve([record]) },
    tools: {
      tool: () => undefined,
      toolkit: () => undefined,
      call: () => Promise.reject(new Error("no tools here")),
    },
    archived: ["a"],
  });
  const session = {
    id: "s",
    token: "",
    state: new Map(),
    send() {},
    signal: new AbortController().signal,
  };
  const call = (name: string) =>
    run({
      name,
      args: {},
      session,
      signal: session.signal,
      timeoutSeconds: 1,
      onEvent() {},
    });
  assert.deepEqual(await call("a"), {
    ok: false,
    code: "unknown_skill",
    message: 'Skill "a" is archived',
  });
  assert.deepEqual(await call("b"), {
    ok: false,
    code: "unknown_skill",
    message: 'Unknown skill "b"',
  });
});
