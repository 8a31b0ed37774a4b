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

Deno.test("runSkillScript() hands the run's history the files the script wrote, not the inputs it left", async () => {
  const folder = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(folder, "edit.sh"),
      "printf new > out.txt\nprintf changed > b.txt\n",
    );
    const kept: [string, string | null][] = [];
    const result = await runSkillScript({
      folder,
      script: "edit.sh",
      args: [],
      files: { "a.txt": "same", "b.txt": "before" },
      timeoutMs: 20_000,
      onEvent: () => {},
      keep: (files, unlisted) => {
        for (const f of files) {
          kept.push([f.name, f.data && new TextDecoder().decode(f.data)]);
        }
        return { files: files.length, bytes: 0, truncated: unlisted > 0 };
      },
    }, { interpreters: DEFAULT_INTERPRETERS });
    assert.equal(result.exit_code, 0, result.stderr_tail);
    assert.deepEqual(kept, [["b.txt", "changed"], ["out.txt", "new"]]);
    assert.deepEqual(result.artifacts.map((a) => a.name), ["b.txt", "out.txt"]);
    assert.deepEqual(result.kept_for_history, {
      files: 2,
      bytes: 0,
      truncated: false,
    });
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});
