/**
 * A script's output reaches the skill's caller twice: as `log` events, a
 * line cut at 2,000 UTF-16 units, and as the result's `stdout_tail`, its
 * last 4,000. Both were cut with slice(), which splits a character
 * outside the BMP: output with an emoji across a cut left a lone
 * surrogate in the events that are served and stored.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runSkillScript } from "../../runtime/skills/scripts/run_script.ts";
import { DEFAULT_INTERPRETERS } from "../../runtime/skills/scripts/interpreters.ts";

Deno.test("runSkillScript() cuts a log line and the output's tail without half a character", async () => {
  const folder = await Deno.makeTempDir({ prefix: "skills3_output_" });
  try {
    // An emoji across the log line's cut (2,000) and the tail's (4,000
    // from the end).
    await Deno.writeTextFile(
      join(folder, "out.txt"),
      `${"x".repeat(1999)}\u{1F600}${"y".repeat(3999)}`,
    );
    await Deno.writeTextFile(join(folder, "cat.sh"), "cat /skill/out.txt\n");
    const messages: string[] = [];
    const result = await runSkillScript({
      folder,
      script: "cat.sh",
      args: [],
      timeoutMs: 20_000,
      onEvent: (kind, data) => {
        if (kind === "log") messages.push(String(data.message));
      },
    }, { interpreters: DEFAULT_INTERPRETERS });
    assert.equal(result.exit_code, 0);
    for (const message of messages) {
      assert.ok(message.isWellFormed(), "a log line keeps half a character");
    }
    assert.ok(
      result.stdout_tail.isWellFormed(),
      "the tail starts with half a character",
    );
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});
