import assert from "node:assert/strict";
import { callSkillScript } from "./tool.ts";

// The arguments are checked before any script runs: no interpreter or
// confinement is needed, the call is refused first.
async function refusal(args: Record<string, unknown>): Promise<string> {
  const folder = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${folder}/scripts`);
    await Deno.writeTextFile(`${folder}/scripts/a.sh`, "echo hi");
    const error = await callSkillScript({ script: "scripts/a.sh", ...args }, {
      folder,
      resources: [],
      limits: { interpreters: {} },
      timeoutMs: 1000,
      signal: new AbortController().signal,
      onEvent() {},
    }).then(() => null, (e: Error) => e);
    assert.ok(error instanceof Error, "the call was not refused");
    return error.message;
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
}

Deno.test("callSkillScript() names the argument item the model got wrong", async (t) => {
  await t.step("an argument that is not a string", async () => {
    assert.match(await refusal({ args: ["-n", 5] }), /"args\.1"/);
  });
  await t.step("a file whose content is not text", async () => {
    assert.match(
      await refusal({ files: { "in.csv": "a", "b.csv": 2 } }),
      /"files\.b\.csv"/,
    );
  });
  await t.step("stdin that is not text", async () => {
    assert.match(await refusal({ stdin: 3 }), /"stdin"/);
  });
  await t.step("a script that is not one of the skill's", async () => {
    // Worded by the schema the model was offered: its list, not its value.
    assert.equal(
      await refusal({ script: "../a.sh" }),
      '"script" must be one of ["scripts/a.sh"]',
    );
  });
});
