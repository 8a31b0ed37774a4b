import assert from "node:assert/strict";
import { listSkillScripts } from "./script_files.ts";

Deno.test("listSkillScripts() does not follow a scripts folder that is a link", async () => {
  // A hostile skill folder whose `scripts` is a link to a host folder would
  // otherwise have that folder's file names (four levels deep) offered to
  // the model as the skill's scripts.
  const host = await Deno.makeTempDir();
  const skill = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${host}/private`);
    await Deno.writeTextFile(`${host}/private/notes.py`, "");
    await Deno.symlink(host, `${skill}/scripts`);
    await Deno.writeTextFile(`${skill}/own.sh`, "");
    assert.deepEqual(await listSkillScripts(skill, ["own.sh"]), ["own.sh"]);
  } finally {
    await Deno.remove(host, { recursive: true });
    await Deno.remove(skill, { recursive: true });
  }
});
