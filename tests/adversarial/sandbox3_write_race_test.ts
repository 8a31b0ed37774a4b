import assert from "node:assert/strict";
import { makeCtx } from "../support/skill_ctx.ts";
import writeFile from "../../skills/filesystem/write_file.ts";

// A worker swaps `root/race.txt` between a plain file and a symlink to a file
// outside root, with atomic renames, while write_file writes to it: the check
// and the write are separate steps, so a write that follows the symlink
// reaches the outside file.
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

for (const mode of ["overwrite", "append"] as const) {
  Deno.test(
    `write_file in mode "${mode}" never writes through a symlink swapped in after its check`,
    async () => {
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
        for (let i = 0; i < 3000; i++) {
          await writeFile.run(
            { path: "race.txt", content: "LEAK\n", mode },
            ctx,
          )
            .catch(() => {});
          if (
            i % 100 === 0 && await Deno.readTextFile(target) !== "ORIGINAL\n"
          ) {
            break;
          }
        }
      } finally {
        const stopped = said("stopped");
        swapper.postMessage("stop");
        await stopped;
        swapper.terminate();
        URL.revokeObjectURL(url);
      }
      assert.equal(await Deno.readTextFile(target), "ORIGINAL\n");
      await Deno.remove(base, { recursive: true });
    },
  );
}
