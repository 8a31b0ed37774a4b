import assert from "node:assert/strict";
import { join } from "node:path";
import { loadSkillFolder, parseSkillMd, readSkillFile } from "./skill_md.ts";

const md = (front: string, body = "Do it.") => `---\n${front}\n---\n${body}\n`;

Deno.test("parseSkillMd() loads a folder written for another runtime with defaults", () => {
  const m = parseSkillMd(
    md(
      "name: pdf-forms\ndescription: Fill PDF forms\nlicense: Apache-2.0\nallowed-tools: Read, Bash",
    ),
  );
  assert.equal(m.name, "pdf-forms");
  assert.equal(m.version, "1.0.0");
  assert.deepEqual(m.triggers, []);
  assert.equal(m.when_to_use, "");
  assert.equal(m.argument_hint, "");
  assert.equal(m.tools, null);
  assert.equal(m.toolkits, null);
  assert.equal(m.max_turns, null);
  assert.deepEqual(m.input_schema, {});
  assert.equal(m.llm, null);
  assert.equal(m.instructions, "Do it.");
  // Other runtimes' keys are kept, not acted on.
  assert.deepEqual(m.metadata, {
    license: "Apache-2.0",
    "allowed-tools": "Read, Bash",
  });
});

Deno.test("parseSkillMd() reads every A2E field", () => {
  const m = parseSkillMd(md(`name: review
description: Review a diff
version: 2.1.0
triggers: [review this, check my diff]
when_to_use: Before merging
argument-hint: '{"diff": "..."}'
tools: [read_file, grep]
toolkits: [github]
max_turns: 6
timeout_seconds: 90.5
category: code
tags: [code, review]
icon: magnifier
input_schema:
  type: object
  required: [diff]
output_schema: {type: object}
llm:
  provider_name: anthropic
  provider_config: {model: claude-x}`));
  assert.equal(m.version, "2.1.0");
  assert.deepEqual(m.triggers, ["review this", "check my diff"]);
  assert.equal(m.argument_hint, '{"diff": "..."}');
  assert.deepEqual(m.tools, ["read_file", "grep"]);
  assert.deepEqual(m.toolkits, ["github"]);
  assert.equal(m.max_turns, 6);
  assert.equal(m.timeout_seconds, 90.5);
  assert.deepEqual(m.tags, ["code", "review"]);
  assert.deepEqual(m.input_schema, { type: "object", required: ["diff"] });
  assert.deepEqual(m.llm, {
    provider_name: "anthropic",
    provider_credentials: {},
    provider_config: { model: "claude-x" },
  });
  assert.deepEqual(m.metadata, {});
});

Deno.test("parseSkillMd() rejects hostile and broken files with clear errors", async (t) => {
  const cases: [string, string, RegExp][] = [
    ["no frontmatter", "# Just markdown", /no YAML frontmatter/],
    ["unclosed frontmatter", "---\nname: x\n", /no closing "---"/],
    [
      "YAML error names the file line",
      "---\nname: x\ndescription: [unclosed\nother: 1\n---\n",
      /YAML error at line 4: Flow sequence/,
    ],
    ["missing name", md("description: d"), /field "name" is required/],
    ["missing description", md("name: x"), /field "description" is required/],
    [
      "name with a slash",
      md("name: ../../etc\ndescription: d"),
      /field "name" must be/,
    ],
    [
      "tags not a list",
      md("name: x\ndescription: d\ntags: {a: 1}"),
      /field "tags" must be a list of strings/,
    ],
    [
      "max_turns not a positive integer",
      md("name: x\ndescription: d\nmax_turns: -2"),
      /field "max_turns" must be a positive integer, got -2/,
    ],
    [
      "schema not an object",
      md("name: x\ndescription: d\ninput_schema: [1]"),
      /field "input_schema" must be a JSON Schema object/,
    ],
    ["frontmatter a list", "---\n- a\n- b\n---\n", /must be a YAML mapping/],
    [
      "llm without provider",
      md("name: x\ndescription: d\nllm: {model: m}"),
      /field "llm.provider_name"/,
    ],
  ];
  for (const [label, text, pattern] of cases) {
    await t.step(label, () => {
      assert.throws(
        () => parseSkillMd(text, { path: "/s/x/SKILL.md" }),
        (e: Error) => {
          assert.match(e.message, /^Cannot load "\/s\/x\/SKILL.md": /);
          assert.match(e.message, pattern);
          return true;
        },
      );
    });
  }
  await t.step("an alias bomb stops at the alias budget", () => {
    const bomb = [
      "name: x",
      "description: d",
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
      "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
      "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
      "e: [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
    ].join("\n");
    assert.throws(() => parseSkillMd(md(bomb)), /YAML error/);
  });
  await t.step("a file over the size cap", () => {
    const huge = md("name: x\ndescription: d", "x".repeat(300_000));
    assert.throws(() => parseSkillMd(huge), /larger than 262144 bytes/);
  });
});

Deno.test("loadSkillFolder() lists linked files inside the folder, never outside it", async () => {
  const dir = await Deno.makeTempDir();
  const outside = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "ref"));
    await Deno.writeTextFile(join(dir, "ref", "guide.md"), "guide");
    await Deno.writeTextFile(join(outside, "secret.txt"), "secret");
    await Deno.symlink(join(outside, "secret.txt"), join(dir, "escape.md"));
    await Deno.writeTextFile(
      join(dir, "SKILL.md"),
      md(
        "name: linked\ndescription: d",
        "See [guide](ref/guide.md#intro), ![img](ref/guide.md), [esc](escape.md), [up](../x.md), [abs](/etc/passwd), [web](https://e.x/a.md) and [gone](nope.md).",
      ),
    );
    const skill = await loadSkillFolder(dir);
    assert.deepEqual(skill.links, ["ref/guide.md", "escape.md", "nope.md"]);
    assert.deepEqual(skill.resources, ["ref/guide.md"]);
    assert.equal(await readSkillFile(skill, "ref/guide.md"), "guide");
    await assert.rejects(
      readSkillFile(skill, "escape.md"),
      /not a file linked/,
    );
    await assert.rejects(readSkillFile(skill, "../x.md"), /not a file linked/);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("loadSkillFolder() refuses a huge SKILL.md before reading it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(dir, "SKILL.md"),
      md("name: x\ndescription: d", "y".repeat(1000)),
    );
    await assert.rejects(
      loadSkillFolder(dir, { maxBytes: 100 }),
      /larger than 100 bytes/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the shipped find_todos folder parses with its linked triage guide", async () => {
  const skill = await loadSkillFolder(
    new URL("../../skills/find_todos", import.meta.url).pathname,
  );
  assert.equal(skill.name, "find_todos");
  assert.deepEqual(skill.toolkits, ["filesystem"]);
  assert.deepEqual(skill.resources, ["reference/triage.md"]);
  assert.equal(skill.output_schema.type, "object");
});
