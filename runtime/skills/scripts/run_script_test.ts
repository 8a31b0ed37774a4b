import assert from "node:assert/strict";
import { join } from "node:path";
import { runSkillScript } from "./run_script.ts";
import { DEFAULT_INTERPRETERS } from "./interpreters.ts";

Deno.test("runSkillScript() types an artifact by its extension, not by a name without one", async () => {
  const folder = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(folder, "names.sh"),
      "printf x > png\nprintf y > report.JSON\nmkdir out.csv\nprintf z > out.csv/data\n",
    );
    const mimes: Record<string, unknown> = {};
    const result = await runSkillScript({
      folder,
      script: "names.sh",
      args: [],
      timeoutMs: 20_000,
      onEvent: (kind, data) => {
        if (kind === "artifact") mimes[String(data.name)] = data.mime;
      },
    }, { interpreters: DEFAULT_INTERPRETERS });
    assert.equal(result.exit_code, 0, result.stderr_tail);
    assert.deepEqual(mimes, {
      "png": "application/octet-stream",
      "report.JSON": "application/json",
      "out.csv/data": "application/octet-stream",
    });
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});
