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

// What a real host over the folder answers to skill/discover/req.
async function discover(dir: string): Promise<Record<string, unknown>> {
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
      return (await agent.request({ type: "skill/discover/req" })).message;
    } finally {
      await agent.close();
    }
  } finally {
    await host.close({ timeoutSeconds: 1 });
  }
}

type Listed = { name: string; description: string }[];

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
    try {
      const skills = (await discover(dir)).skills as Listed;
      const names = skills.map((s) => s.name).sort();
      assert.deepEqual(names, ["good", "pipe"]);
      const pipe = skills.find((s) => s.name === "pipe")!;
      assert.match(
        pipe.description,
        /^Could not be loaded: Cannot load ".*pipe\/SKILL\.md": it is not a regular file/,
      );
    } finally {
      writer.kill("SIGKILL");
      await writer.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test(
  "a SKILL.md whose YAML aliases loop or expand a hundredfold is not loadable, and discovery still lists its neighbours",
  OPTS,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "skillbox-skill-alias-" });
    const write = async (name: string, front: string) => {
      await Deno.mkdir(join(dir, name));
      await Deno.writeTextFile(
        join(dir, name, "SKILL.md"),
        `---\nname: ${name}\ndescription: A skill (tests only).\n${front}---\n\nSay ok.\n`,
      );
    };
    await write("good", "");
    // An alias inside the node it names: a structure that never ends.
    await write("loop", "notes: &a [1, *a]\n");
    // 10,000 items named 49 times (under the alias budget): about 20 KB of
    // file (a frontmatter holds 32 KiB), 1 MB of JSON in every discovery
    // answer.
    const items = Array(10_000).fill("x").join(",");
    await write(
      "wide",
      `l0: &l0 [${items}]\nl1: [${Array(49).fill("*l0").join(",")}]\n`,
    );
    try {
      const found = await discover(dir);
      const skills = found.skills as Listed;
      assert.ok(Array.isArray(skills), JSON.stringify(found));
      assert.deepEqual(skills.map((s) => s.name).sort(), [
        "good",
        "loop",
        "wide",
      ]);
      for (const name of ["loop", "wide"]) {
        assert.match(
          skills.find((s) => s.name === name)!.description,
          /^Could not be loaded: .*the frontmatter's YAML aliases expand it past \d+ bytes/,
        );
      }
      assert.ok(
        JSON.stringify(found).length < 64 * 1024,
        "the discovery answer carries the expansion",
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
