import assert from "node:assert/strict";
import { dataOf, makeCtx } from "../support/skill_ctx.ts";
import grep from "../../skills/filesystem/grep.ts";
import readFile from "../../skills/filesystem/read_file.ts";
import writeFile from "../../skills/filesystem/write_file.ts";

// A worker swaps `root/race.txt` between a plain file and a symlink to a file
// outside root, with atomic renames, while a tool uses it: the check and the
// open are separate steps, so an open that follows the symlink reaches the
// outside file.
const SWAPPER = `
  const { root, target } = await new Promise((ok) => (self.onmessage = (e) => ok(e.data)));
  let stop = false;
  self.onmessage = () => (stop = true);
  self.postMessage("started");
  for (let i = 0; !stop; i++) {
    Deno.writeTextFileSync(root + "/.plain", "inside\\n");
    Deno.renameSync(root + "/.plain", root + "/race.txt");
    Deno.symlinkSync(target, root + "/.link");
    Deno.renameSync(root + "/.link", root + "/race.txt");
    // Let the stop message in now and then.
    if (i % 32 === 0) await new Promise((ok) => setTimeout(ok, 0));
  }
  self.postMessage("stopped");
`;

/**
 * Runs `attempt` up to `attempts` times (until it returns true) while
 * race.txt is swapped; the outside file holds "ORIGINAL\n".
 */
async function whileSwapping(
  attempt: (
    ctx: ReturnType<typeof makeCtx>["ctx"],
    target: string,
  ) => Promise<boolean>,
  attempts = 3000,
): Promise<{ base: string; target: string }> {
  const base = await Deno.makeTempDir({ prefix: "skillbox_race_" });
  const root = `${base}/root`;
  const target = `${base}/outside.txt`;
  await Deno.mkdir(root);
  await Deno.writeTextFile(target, "ORIGINAL\n");
  const url = URL.createObjectURL(
    new Blob([SWAPPER], { type: "text/javascript" }),
  );
  const swapper = new Worker(url, { type: "module" });
  const said = (what: string) =>
    new Promise<void>((ok) => {
      swapper.onmessage = (e) => e.data === what && ok();
    });
  const started = said("started");
  swapper.postMessage({ root, target });
  await started;
  const { ctx } = makeCtx({ root, writable: true });
  try {
    for (let i = 0; i < attempts; i++) {
      if (await attempt(ctx, target).catch(() => false)) break;
    }
  } finally {
    const stopped = said("stopped");
    swapper.postMessage("stop");
    await stopped;
    swapper.terminate();
    URL.revokeObjectURL(url);
  }
  return { base, target };
}

for (const mode of ["overwrite", "append"] as const) {
  Deno.test(
    `write_file in mode "${mode}" never writes through a symlink swapped in after its check`,
    async () => {
      const { base, target } = await whileSwapping(async (ctx, target) => {
        await writeFile.run({ path: "race.txt", content: "LEAK\n", mode }, ctx)
          .catch(() => {});
        return await Deno.readTextFile(target) !== "ORIGINAL\n";
      });
      assert.equal(await Deno.readTextFile(target), "ORIGINAL\n");
      await Deno.remove(base, { recursive: true });
    },
  );
}

Deno.test("read_file never reads through a symlink swapped in after its check", async () => {
  const read: string[] = [];
  const { base } = await whileSwapping(async (ctx) => {
    const content = dataOf(await readFile.run({ path: "race.txt" }, ctx))
      .content as string;
    read.push(content);
    return content === "ORIGINAL\n";
  });
  assert.ok(!read.includes("ORIGINAL\n"), "read the outside file");
  await Deno.remove(base, { recursive: true });
});

Deno.test("grep never reads through a symlink swapped in after its walk", async () => {
  let leaked = false;
  const { base } = await whileSwapping(async (ctx) => {
    const found = dataOf(await grep.run({ pattern: "ORIGINAL" }, ctx));
    leaked ||= (found.matches as unknown[]).length > 0;
    return leaked;
  }, 1000);
  assert.equal(leaked, false);
  await Deno.remove(base, { recursive: true });
});
