/**
 * A hostile Agent Skills folder, against a real host: a skill folder whose
 * `SKILL.md` is not a regular file (a named pipe, which blocks whoever
 * opens it to read until someone writes) is listed as a skill that could
 * not be loaded, and the host never opens it, so discovery answers and
 * the folder's neighbours stay listed.
 *
 * A writer child keeps feeding the pipe a valid skill file, so a host that
 * did open it would list that skill (the assertion fails) instead of
 * hanging the test.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost } from "../../runtime/host.ts";
import { parseConfig } from "../../runtime/config.ts";
import { connectA2e } from "../support/skills_host.ts";

const OPTS = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "a SKILL.md that is a named pipe is listed as not loadable, never opened, and its neighbours are served",
  OPTS,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "skillbox-skill-fifo-" });
    await Deno.mkdir(join(dir, "good"));
    await Deno.writeTextFile(
      join(dir, "good", "SKILL.md"),
      "---\nname: good\ndescription: A plain skill (tests only).\n---\n\nSay ok.\n",
    );
    await Deno.mkdir(join(dir, "pipe"));
    const fifo = join(dir, "pipe", "SKILL.md");
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.ok(made.success, "mkfifo failed");
    const fed = join(dir, "fed.md");
    await Deno.writeTextFile(
      fed,
      "---\nname: pipe-fed\ndescription: Read from the pipe (tests only).\n---\n\nSay fed.\n",
    );
    // Feeds every reader the pipe gets, for as long as the test runs.
    const writer = new Deno.Command("sh", {
      args: ["-c", 'while :; do cat "$1" > "$2"; done', "sh", fed, fifo],
      stdout: "null",
      stderr: "null",
    }).spawn();
    const config = parseConfig(JSON.stringify({
      skills: [dir],
      builtin_skills: false,
      sandbox: { cache_dir: null },
    }));
    const host = createHost({ config });
    try {
      const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
      await host.ready;
      const agent = await connectA2e(url.replace("http", "ws") + "/a2e");
      try {
        const found = await agent.request({ type: "skill/discover/req" });
        const skills = found.message.skills as {
          name: string;
          description: string;
        }[];
        const names = skills.map((s) => s.name).sort();
        assert.deepEqual(names, ["good", "pipe"]);
        const pipe = skills.find((s) => s.name === "pipe")!;
        assert.match(
          pipe.description,
          /^Could not be loaded: Cannot load ".*pipe\/SKILL\.md": it is not a regular file/,
        );
      } finally {
        await agent.close();
      }
    } finally {
      await host.close({ timeoutSeconds: 1 });
      writer.kill("SIGKILL");
      await writer.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
);
