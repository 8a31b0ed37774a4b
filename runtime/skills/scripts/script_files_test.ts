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

Deno.test("listSkillScripts() stops reading a scripts folder at the scripts it keeps", async () => {
  // Every run of the skill lists its scripts (and each run_skill_script
  // call again): a folder of 100,000 files was read whole each time, for
  // the 200 scripts kept.
  const listed = async (files: number) => {
    const skill = await Deno.makeTempDir();
    const readDir = Deno.readDir;
    let entries = 0;
    try {
      await Deno.mkdir(`${skill}/scripts`);
      for (let i = 0; i < files; i++) {
        await Deno.writeTextFile(`${skill}/scripts/${i}.py`, "");
      }
      Deno.readDir = async function* (path) {
        for await (const entry of readDir(path)) yield (entries++, entry);
      };
      assert.equal((await listSkillScripts(skill, [])).length, 200);
    } finally {
      Deno.readDir = readDir;
      await Deno.remove(skill, { recursive: true });
    }
    return entries;
  };
  assert.equal(await listed(600), await listed(300));
});
