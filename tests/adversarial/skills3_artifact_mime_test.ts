/**
 * A script names the files it leaves, and so the extension the artifact's
 * `mime` is looked up by. The lookup was a plain object: `a.constructor`
 * found `Object` (a function, which JSON drops, so the event reached the
 * client with no `mime`) and `b.__proto__` found `Object.prototype`. Every
 * artifact's `mime` must be a string, the generic one for unknown names.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runSkillScript } from "../../runtime/skills/scripts/run_script.ts";
import { DEFAULT_INTERPRETERS } from "../../runtime/skills/scripts/interpreters.ts";

Deno.test("runSkillScript() sends a string mime for files named after Object's properties", async () => {
  const folder = await Deno.makeTempDir({ prefix: "skills3_mime_" });
  try {
    await Deno.mkdir(join(folder, "scripts"));
    await Deno.writeTextFile(
      join(folder, "scripts", "names.sh"),
      "printf x > a.constructor\nprintf y > b.__proto__\nprintf z > c.toString\nprintf w > d.csv\n",
    );
    const events: { kind: string; data: Record<string, unknown> }[] = [];
    const result = await runSkillScript({
      folder,
      script: "scripts/names.sh",
      args: [],
      timeoutMs: 20_000,
      onEvent: (kind, data) => events.push({ kind, data }),
    }, { interpreters: DEFAULT_INTERPRETERS });
    assert.equal(result.exit_code, 0);
    const mimes = Object.fromEntries(
      events.filter((e) => e.kind === "artifact").map((e) => [
        e.data.name,
        e.data.mime,
      ]),
    );
    assert.deepEqual(mimes, {
      "a.constructor": "application/octet-stream",
      "b.__proto__": "application/octet-stream",
      "c.toString": "application/octet-stream",
      "d.csv": "text/csv",
    });
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});
