// Hostile files in a skill folder: the skill file or a linked resource is a
// FIFO, a link to /dev/zero, a link loop, a link out, or a folder. Loading
// and reading either work or refuse with a SkillboxError; none hangs.

import assert from "node:assert/strict";
import { SkillboxError } from "../../protocol/errors.ts";
import {
  loadSkillFolder,
  readSkillFile,
} from "../../runtime/skills/skill_md.ts";

const LINKED = "---\nname: s\ndescription: d\n---\n" +
  "[a](fifo.md) [b](zero.md) [c](loop.md) [d](out.md) [e](dir.md) " +
  "[f](%0a.md) [g](ok.md)\n";

async function mkfifo(path: string): Promise<void> {
  const { success } = await new Deno.Command("mkfifo", { args: [path] })
    .output();
  assert.ok(success);
}

function refusedWithReason(error: unknown): void {
  assert.ok(error instanceof SkillboxError, String(error));
}

Deno.test("hostile linked files are read or refused, never hang", async () => {
  const dir = await Deno.makeTempDir({ prefix: "s" });
  const folder = `${dir}/s`;
  await Deno.mkdir(folder);
  await Deno.writeTextFile(`${folder}/SKILL.md`, LINKED);
  await mkfifo(`${folder}/fifo.md`);
  await Deno.symlink("/dev/zero", `${folder}/zero.md`);
  await Deno.symlink(`${folder}/loop.md`, `${folder}/loop.md`);
  await Deno.symlink("/etc/hostname", `${folder}/out.md`);
  await Deno.mkdir(`${folder}/dir.md`);
  await Deno.writeTextFile(`${folder}/ok.md`, "fine");
  try {
    const skill = await loadSkillFolder(folder);
    assert.ok(skill.resources.includes("ok.md"));
    assert.equal(await readSkillFile(skill, "ok.md"), "fine");
    for (const name of ["fifo.md", "zero.md", "loop.md", "out.md", "dir.md"]) {
      await readSkillFile(skill, name).then(
        (text) => assert.ok(text.length <= 256 * 1024, name),
        refusedWithReason,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

for (const kind of ["fifo", "zero", "loop", "dir"] as const) {
  Deno.test(`a SKILL.md that is a ${kind} is refused, never hangs`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "s" });
    const file = `${dir}/SKILL.md`;
    if (kind === "fifo") await mkfifo(file);
    if (kind === "zero") await Deno.symlink("/dev/zero", file);
    if (kind === "loop") await Deno.symlink(file, file);
    if (kind === "dir") await Deno.mkdir(file);
    try {
      await loadSkillFolder(dir).then(
        () => assert.fail(`loaded a ${kind}`),
        refusedWithReason,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
