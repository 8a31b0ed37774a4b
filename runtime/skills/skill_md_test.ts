import assert from "node:assert/strict";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import {
  findLinks,
  findSkillFile,
  loadSkillFolder,
  MAX_FRONTMATTER_CHARS,
  MAX_RESOURCE_BYTES,
  MAX_SKILL_MD_BYTES,
  parseSkillMd,
  readSkillFile,
  splitFrontmatter,
} from "./skill_md.ts";
import { callbacksDuring } from "../../tests/support/callbacks.ts";

const md = (front: string, body = "Do it.") => `---\n${front}\n---\n${body}\n`;
const FIXTURES = fileURLToPath(
  new URL("../../tests/fixtures/skills/dialects/", import.meta.url),
);

Deno.test("a spec-strict SKILL.md folder loads with no warning and its fields in metadata", async () => {
  const skill = await loadSkillFolder(join(FIXTURES, "release-notes"));
  assert.equal(skill.name, "release-notes");
  assert.deepEqual(skill.warnings, []);
  assert.equal(skill.file_path, join(skill.folder, "SKILL.md"));
  assert.match(skill.description, /^Draft release notes/);
  assert.deepEqual(skill.resources, ["references/format.md"]);
  assert.deepEqual(skill.tools, ["run_command", "read_file"]);
  assert.deepEqual(skill.command_rules, [
    { words: ["git", "log"], prefix: true },
    { words: ["git", "tag"], prefix: true },
  ]);
  assert.deepEqual(skill.metadata, {
    author: "skillbox-tests",
    version: "1.2",
    license: "Apache-2.0",
    compatibility: "Needs git on PATH and a repository with tags.",
    "allowed-tools": "Bash(git log:*) Bash(git tag:*) Read",
    dialect: "agent-skills",
    tool_names: {
      mapped: {
        "Bash(git log:*)": ["run_command"],
        "Bash(git tag:*)": ["run_command"],
        Read: ["read_file"],
      },
      unknown: [],
    },
    command_rules: ["git log *", "git tag *"],
  });
});

Deno.test("an A2E skill.md folder loads with mapped tool names and parameter maps as schemas", async () => {
  const skill = await loadSkillFolder(join(FIXTURES, "csv_digest"));
  assert.equal(skill.name, "csv_digest");
  assert.equal(skill.file_path, join(skill.folder, "skill.md"));
  assert.equal(skill.version, "0.3.0");
  assert.deepEqual(skill.triggers, [
    "summarize this csv",
    "how many rows are in",
  ]);
  assert.match(skill.when_to_use, /shape of a tabular file/);
  assert.equal(
    skill.argument_hint,
    '{"path": "data/people.csv", "column": "city"}',
  );
  assert.equal(skill.metadata.user_invocable, true);
  assert.equal(skill.metadata.dialect, "a2e");
  assert.deepEqual(skill.tools, [
    "read_file",
    "find_files",
    "grep",
    "run_command",
    "write_file",
    "http_request",
  ]);
  assert.equal(skill.command_rules, null);
  assert.deepEqual(skill.metadata.tool_names, {
    mapped: {
      Read: ["read_file"],
      Glob: ["find_files"],
      Grep: ["grep"],
      Bash: ["run_command"],
      Write: ["write_file"],
      Edit: ["read_file", "write_file"],
      WebFetch: ["http_request"],
    },
    unknown: ["WebSearch"],
  });
  assert.deepEqual(skill.warnings, [
    'tool names skillbox does not know grant nothing: "WebSearch"',
  ]);
  assert.deepEqual(skill.input_schema, {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "The CSV file, relative to the filesystem root",
      },
      column: {
        type: "string",
        description: "A column whose distinct values to list",
      },
      delimiter: { type: "string", default: "," },
    },
    required: ["path"],
  });
  assert.deepEqual(skill.output_schema, {
    type: "object",
    properties: {
      rows: { type: "integer" },
      columns: { type: "array", items: { type: "string" } },
      distinct: {
        type: "object",
        properties: {
          values: { type: "array", items: { type: "string" } },
          count: { type: "integer" },
        },
      },
    },
  });
});

Deno.test("parseSkillMd() applies the name rules leniently, with one warning each", async (t) => {
  const cases: [string, string, string | undefined, string, RegExp[]][] = [
    // label, name line, folder, name served, warnings expected
    ["a good name", "name: pdf-forms", "pdf-forms", "pdf-forms", []],
    ["upper case", "name: Pdf", "Pdf", "Pdf", [
      /"Pdf" breaks the Agent Skills rule/,
    ]],
    ["leading -", "name: -pdf", "-pdf", "-pdf", [
      /breaks the Agent Skills rule/,
    ]],
    ["trailing -", "name: pdf-", "pdf-", "pdf-", [/breaks/]],
    ["double -", "name: pd--f", "pd--f", "pd--f", [/breaks/]],
    [
      "65 characters",
      `name: ${"a".repeat(65)}`,
      "a".repeat(65),
      "a".repeat(65),
      [/breaks/],
    ],
    ["_ outside A2E's dialect", "name: pdf_x", "pdf_x", "pdf_x", [/breaks/]],
    ["_ in A2E's dialect", "name: pdf_x\ntriggers: [x]", "pdf_x", "pdf_x", []],
    ["not matching its folder", "name: pdf", "forms", "pdf", [
      /"pdf" does not match its folder "forms"/,
    ]],
    ["missing", "license: MIT", "notes", "notes", [
      /"name" is missing: using the folder name "notes"/,
    ]],
    ["a path", "name: ../../etc", "etc-skill", "etc-skill", [
      /cannot name a skill.*using the folder name "etc-skill"/,
    ]],
    ["a list", "name: [a, b]", "ab", "ab", [
      /"name" must be a string: using the folder name/,
    ]],
    ["a number", "name: 42", "42", "42", []],
  ];
  for (const [label, nameLine, folder, served, expected] of cases) {
    await t.step(label, () => {
      const m = parseSkillMd(md(`${nameLine}\ndescription: d`), { folder });
      assert.equal(m.name, served);
      assert.equal(m.warnings.length, expected.length, m.warnings.join("\n"));
      expected.forEach((re, i) => assert.match(m.warnings[i]!, re));
      if (expected.length > 0) {
        assert.deepEqual(m.metadata.warnings, m.warnings);
      } else assert.equal(m.metadata.warnings, undefined);
    });
  }
  await t.step("an unusable name with no folder to fall back on", () => {
    assert.throws(
      () =>
        parseSkillMd(md("name: a/b\ndescription: d"), {
          path: "/s/x/SKILL.md",
        }),
      /Cannot load "\/s\/x\/SKILL.md": name "a\/b" cannot name a skill/,
    );
  });
});

Deno.test("parseSkillMd() reads argument_hint and argument-hint alike", () => {
  for (const key of ["argument_hint", "argument-hint"]) {
    const m = parseSkillMd(md(`name: a\ndescription: d\n${key}: <file>`));
    assert.equal(m.argument_hint, "<file>");
  }
});

Deno.test("parseSkillMd() needs a description and cuts a long one", async (t) => {
  for (
    const [label, front, re] of [
      ["missing", "name: a", /field "description" is required/],
      [
        "empty",
        "name: a\ndescription: '  '",
        /field "description" is required/,
      ],
      [
        "a list",
        "name: a\ndescription: [x]",
        /field "description" must be text/,
      ],
    ] as const
  ) {
    await t.step(label, () => {
      assert.throws(
        () => parseSkillMd(md(front), { path: "/s/a/SKILL.md" }),
        (e: Error) => {
          assert.match(e.message, /^Cannot load "\/s\/a\/SKILL.md": /);
          assert.match(e.message, re);
          return true;
        },
      );
    });
  }
  await t.step("over 1024 characters: cut with a warning", () => {
    const m = parseSkillMd(md(`name: a\ndescription: ${"w".repeat(1500)}`));
    assert.equal(m.description, "w".repeat(1024));
    assert.deepEqual(m.warnings, [
      'field "description" is 1500 characters, more than 1024: cut to 1024',
    ]);
  });
  await t.step("a 30 KB description under the frontmatter's cap is cut", () => {
    const text = md(`name: a\ndescription: ${"m".repeat(30 * 1024)}`);
    const m = parseSkillMd(text);
    assert.equal(m.description.length, 1024);
    assert.match(m.warnings[0]!, /30720 characters, more than 1024: cut/);
  });
  await t.step(
    "a 1 MB description under the default cap is refused unread",
    async () => {
      const dir = await Deno.makeTempDir();
      try {
        await Deno.writeTextFile(
          join(dir, "SKILL.md"),
          md(`name: big\ndescription: ${"m".repeat(1024 * 1024)}`),
        );
        await assert.rejects(
          loadSkillFolder(dir),
          /SKILL.md": file is larger than 262144 bytes/,
        );
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  );
});

Deno.test("parseSkillMd() keeps the specification's fields and refuses to let metadata hide warnings", () => {
  const m = parseSkillMd(md(
    [
      "name: a",
      "description: d",
      "license: MIT",
      `compatibility: ${"c".repeat(600)}`,
      "metadata:",
      "  author: ann",
      "  stars: 5",
      "  warnings: []",
      "dialect: fake",
      "model: some-model",
    ].join("\n"),
  ));
  assert.equal(m.metadata.license, "MIT");
  assert.equal(m.metadata.compatibility, "c".repeat(500));
  assert.equal(m.metadata.author, "ann");
  assert.equal(m.metadata.stars, 5);
  assert.equal(m.metadata.model, "some-model");
  assert.equal(m.metadata.dialect, "agent-skills");
  assert.deepEqual(m.warnings, [
    'field "metadata.stars" should be a string (the specification\'s metadata is a string map)',
    'field "metadata.warnings" is reserved for skillbox: ignored',
    'field "compatibility" is 600 characters, more than 500: cut to 500',
    'field "dialect" is reserved for skillbox: ignored',
  ]);
  assert.deepEqual(m.metadata.warnings, m.warnings);
});

Deno.test("parseSkillMd() reads every A2E field", () => {
  const m = parseSkillMd(md(`name: review
description: Review a diff
version: 2.1.0
triggers: [review this, check my diff]
when_to_use: Before merging
argument-hint: '{"diff": "..."}'
user-invocable: false
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
  assert.equal(m.metadata.user_invocable, false);
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
  assert.deepEqual(m.warnings, []);
  assert.deepEqual(m.metadata, { dialect: "a2e", user_invocable: false });
});

Deno.test("parseSkillMd() loads fields of the wrong type as their defaults, with warnings", () => {
  const m = parseSkillMd(md([
    "name: x",
    "description: d",
    "tags: {a: 1}",
    "max_turns: -2",
    "input_schema: [1]",
    "llm: {model: m}",
    "user-invocable: maybe",
    "inputs: {p: string}",
  ].join("\n")));
  assert.equal(m.tags, null);
  assert.equal(m.max_turns, null);
  // A broken input_schema leaves the inputs parameter map to stand in.
  assert.deepEqual(m.input_schema, {
    type: "object",
    properties: { p: { type: "string" } },
  });
  assert.equal(m.llm, null);
  assert.deepEqual(m.warnings, [
    'field "user-invocable" must be true or false: ignored',
    'field "max_turns" must be a positive integer, got -2: ignored',
    'field "tags" must be a list of strings: ignored',
    'field "input_schema" must be a mapping: ignored',
    'field "llm" must be a provider name or a mapping with "provider_name": the host\'s default LLM is used',
  ]);
});

Deno.test("parseSkillMd() reads inputs as a list of parameters and prefers input_schema", () => {
  const list = parseSkillMd(md(
    "name: x\ndescription: d\ninputs:\n  - {name: q, type: string, required: true}\n  - {type: int}\n  - {name: n, type: bignum}",
  ));
  assert.deepEqual(list.input_schema, {
    type: "object",
    properties: { q: { type: "string" }, n: {} },
    required: ["q"],
  });
  assert.deepEqual(list.warnings, [
    'field "inputs[1]" has no "name": ignored',
    'field "inputs.n" has an unknown type "bignum": any value',
  ]);
  const both = parseSkillMd(md(
    "name: x\ndescription: d\ninput_schema: {type: object}\ninputs: {q: string}",
  ));
  assert.deepEqual(both.input_schema, { type: "object" });
  assert.deepEqual(both.warnings, [
    'field "inputs" is ignored: "input_schema" is given',
  ]);
});

Deno.test("parseSkillMd() makes a skill unloadable only for broken YAML, no frontmatter or no description", async (t) => {
  const cases: [string, string, RegExp][] = [
    ["no frontmatter", "# Just markdown", /no YAML frontmatter/],
    ["unclosed frontmatter", "---\nname: x\n", /no closing "---"/],
    [
      "YAML error names the file line",
      "---\nname: x\ndescription: [unclosed\nother: 1\n---\n",
      /YAML error at line 4: Flow sequence/,
    ],
    ["frontmatter a list", "---\n- a\n- b\n---\n", /must be a YAML mapping/],
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
  await t.step("a file over the cap in bytes, not in characters", () => {
    // 150,000 characters, 300,000 bytes of UTF-8: the cap counts bytes.
    const wide = md("name: x\ndescription: d", "\u00e9".repeat(150_000));
    assert.throws(() => parseSkillMd(wide), /larger than 262144 bytes/);
  });
});

Deno.test("findSkillFile() prefers SKILL.md over skill.md and loadSkillFolder() says the other is ignored", async () => {
  const dir = await Deno.makeTempDir({ prefix: "both-" });
  try {
    assert.equal(await findSkillFile(dir), null);
    await Deno.writeTextFile(
      join(dir, "skill.md"),
      md("name: low\ndescription: d"),
    );
    assert.deepEqual(await findSkillFile(dir), {
      name: "skill.md",
      ignored: null,
    });
    await Deno.writeTextFile(
      join(dir, "SKILL.md"),
      md("name: up\ndescription: d"),
    );
    const skill = await loadSkillFolder(dir);
    assert.equal(skill.file_path, join(skill.folder, "SKILL.md"));
    assert.match(
      skill.warnings.at(-1)!,
      /also has "skill.md", which is ignored/,
    );
    assert.deepEqual(skill.metadata.warnings, skill.warnings);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("findSkillFile() looks the two names up: its work does not grow with the folder", async () => {
  // The catalog finds each folder's skill file on every request that lists
  // skills. It listed the whole folder: 1.5 s for one of 100,000 files, on
  // every skill/discover and skill/call of every session.
  const listed = async (files: number) => {
    const dir = await Deno.makeTempDir();
    const readDir = Deno.readDir;
    let entries = 0;
    try {
      await Deno.writeTextFile(
        join(dir, "SKILL.md"),
        md("name: a\ndescription: d"),
      );
      for (let i = 0; i < files; i++) {
        await Deno.writeTextFile(join(dir, `${i}.md`), "");
      }
      Deno.readDir = async function* (path) {
        for await (const entry of readDir(path)) yield (entries++, entry);
      };
      assert.deepEqual(await findSkillFile(dir), {
        name: "SKILL.md",
        ignored: null,
      });
    } finally {
      Deno.readDir = readDir;
      await Deno.remove(dir, { recursive: true });
    }
    return entries;
  };
  assert.equal(await listed(300), await listed(3));
});

Deno.test("findSkillFile() counts one file under both names once, as a case-insensitive folder shows it", async () => {
  // Such a folder answers "skill.md" with its "SKILL.md": a hard link is
  // the same file under both names on any filesystem.
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(dir, "SKILL.md"),
      md("name: a\ndescription: d"),
    );
    await Deno.link(join(dir, "SKILL.md"), join(dir, "skill.md"));
    assert.deepEqual(await findSkillFile(dir), {
      name: "SKILL.md",
      ignored: null,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadSkillFolder() refuses a skill file that links out of its folder", async () => {
  const dir = await Deno.makeTempDir();
  const outside = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(outside, "secret.md"),
      md("name: secret\ndescription: host file", "PRIVATE"),
    );
    await Deno.symlink(join(outside, "secret.md"), join(dir, "SKILL.md"));
    await assert.rejects(
      loadSkillFolder(dir),
      /a link that leads out of its folder/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
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

Deno.test("readSkillFile() reads a linked file of exactly the bound whole, and refuses one byte more", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // Multi-byte text: the bound counts bytes, and the last character ends
    // exactly on it.
    const full = "é".repeat(MAX_RESOURCE_BYTES / 2);
    await Deno.writeTextFile(join(dir, "full.md"), full);
    await Deno.writeTextFile(join(dir, "over.md"), full + "x");
    await Deno.writeTextFile(
      join(dir, "SKILL.md"),
      md("name: s\ndescription: d", "[a](full.md) [b](over.md)"),
    );
    const skill = await loadSkillFolder(dir);
    assert.equal(await readSkillFile(skill, "full.md"), full);
    await assert.rejects(
      readSkillFile(skill, "over.md"),
      /larger than 262144 bytes/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadSkillFolder() holds a SKILL.md to the cap in its bytes, even when they are not UTF-8", async () => {
  // A file in another encoding (Latin-1's "é" is one byte, 0xE9) is read
  // with U+FFFD for each byte that is not UTF-8: three bytes of UTF-8 each.
  // Measured again as that text, a file of 100 KB counted as 300 KB and
  // was refused as "larger than 262144 bytes".
  const dir = await Deno.makeTempDir();
  try {
    const head = new TextEncoder().encode(
      md("name: latin\ndescription: d", ""),
    );
    const file = new Uint8Array(MAX_SKILL_MD_BYTES).fill(0xe9);
    file.set(head);
    await Deno.writeFile(join(dir, "SKILL.md"), file);
    const skill = await loadSkillFolder(dir);
    assert.equal(skill.name, "latin");
    assert.equal(
      skill.instructions,
      "\ufffd".repeat(file.length - head.length),
    );
    // One byte more is still refused, before it is read.
    await Deno.writeFile(
      join(dir, "SKILL.md"),
      new Uint8Array([...file, 0xe9]),
    );
    await assert.rejects(loadSkillFolder(dir), /larger than 262144 bytes/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadSkillFolder() refuses a huge SKILL.md before reading it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(dir, "SKILL.md"),
      md("name: x\ndescription: d", "y".repeat(256 * 1024)),
    );
    await assert.rejects(
      loadSkillFolder(dir),
      /larger than 262144 bytes/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the shipped find-todos folder parses with its linked triage guide and no warning", async () => {
  const skill = await loadSkillFolder(
    new URL("../../skills/find-todos", import.meta.url).pathname,
  );
  assert.equal(skill.name, "find-todos");
  assert.deepEqual(skill.toolkits, ["filesystem"]);
  assert.deepEqual(skill.resources, ["reference/triage.md"]);
  assert.equal(skill.output_schema.type, "object");
  assert.deepEqual(skill.warnings, []);
});

Deno.test("findLinks() keeps n distinct links in work linear in n", () => {
  // Each link was looked for among those already found: a 256 KiB body of
  // 30,000 distinct links held the host's thread for about 30 s. Counted
  // here: the items Array.prototype.includes may compare.
  const includes = Object.getOwnPropertyDescriptor(
    Array.prototype,
    "includes",
  )!;
  let compared = 0;
  Object.defineProperty(Array.prototype, "includes", {
    ...includes,
    value(this: unknown[], ...args: unknown[]) {
      compared += this.length;
      return includes.value.apply(this, args);
    },
  });
  const work = (n: number) => {
    compared = 0;
    const targets = Array.from({ length: n }, (_, i) => `${i}.md`);
    const body = targets.map((t) => `[a](${t}) [again](${t})`).join("\n");
    assert.deepEqual(findLinks(body), targets);
    return compared;
  };
  let small, large;
  try {
    small = work(1_000);
    large = work(4_000);
  } finally {
    Object.defineProperty(Array.prototype, "includes", includes);
  }
  // Four times the links: four times the work at most, not sixteen.
  assert.ok(large <= 4 * small, `${small} then ${large} items compared`);
});

Deno.test("findLinks() scans a hostile body once, not once per bracket", () => {
  // A link's text may not hold "[" and its target may not hold "(": where
  // they could, every "[" of a body such as "[[[[..." or "![](![](..."
  // rescanned the rest of it, and one 256 KiB SKILL.md held the host's
  // event loop for a minute while it loaded. The same links are found
  // either way, except a target cut at "(" (it was cut at ")" before, so
  // "b(1).md" was read as "b(1").
  assert.deepEqual(findLinks("[a [b](c.md)"), ["c.md"]);
  assert.deepEqual(findLinks("[a](b(1).md) and [d](e.md)"), ["e.md"]);
  const size = MAX_SKILL_MD_BYTES - 100;
  for (const unit of ["[", "![](", "[](", "[](x ", '[](x "']) {
    const body = unit.repeat(Math.floor(size / unit.length));
    const m = parseSkillMd(md("name: a\ndescription: A", body));
    assert.deepEqual(m.links, []);
  }
});

Deno.test("splitFrontmatter() reads YAML 1.1 tags as plain JSON values, never as Set, Map, Buffer or Date", () => {
  const { data } = splitFrontmatter(
    md([
      "name: a",
      "description: A",
      "bin: !!binary aGk=",
      "when: !!timestamp 2001-12-14",
      "kinds: !!set {x, y}",
      "order: !!omap [k: 1]",
      // A set that holds itself slipped past the check for endless values.
      "loop: &l !!set { ? *l }",
    ].join("\n")),
    "SKILL.md",
  );
  // What a client is served is what was parsed: nothing lost or changed.
  assert.deepEqual(JSON.parse(JSON.stringify(data)), data);
  assert.equal(data.bin, "aGk=");
  assert.equal(data.when, "2001-12-14");
  assert.deepEqual(data.kinds, { x: null, y: null });
});

Deno.test("splitFrontmatter() writes nothing to the host's stderr for a hostile file", () => {
  const warned: unknown[] = [];
  const original = process.emitWarning;
  process.emitWarning = (...args: unknown[]) => void warned.push(args[0]);
  try {
    splitFrontmatter(
      md(
        'name: a\ndescription: A\n? [ "\\e[31mkey" ]\n: 1\n? !!binary aGk=\n: 2',
      ),
      "SKILL.md",
    );
  } finally {
    process.emitWarning = original;
  }
  assert.deepEqual(warned, []);
});

Deno.test("splitFrontmatter() finds a duplicate key among n keys in work linear in n", () => {
  // yaml's own check compared each key with every earlier one: a 256 KiB
  // mapping of short keys held the host's thread for minutes (a full
  // frontmatter of them is tried here, and a quarter of one).
  const keysOf = (chars: number) => {
    const keys: string[] = [];
    for (let i = 0, size = 0; size < chars; i++) {
      keys.push(`k${i.toString(36)}: 1`);
      size += keys.at(-1)!.length + 1;
    }
    return keys;
  };
  const keys = keysOf(MAX_FRONTMATTER_CHARS - 200);
  const quarter = keys.slice(0, keys.length / 4);
  const work = (keys: string[]) =>
    callbacksDuring(() => {
      const { data } = splitFrontmatter(md(keys.join("\n")), "SKILL.md");
      assert.equal(Object.keys(data).length, keys.length);
    });
  const small = work(quarter);
  const large = work(keys);
  // Four times the keys: four times the work, not sixteen.
  assert.ok(large < 5 * small, `${small} then ${large} callbacks`);
  assert.throws(
    () => splitFrontmatter(md([...keys, "k1: 2"].join("\n")), "SKILL.md"),
    new RegExp(
      `YAML error at line ${keys.length + 2}: Map keys must be unique`,
    ),
  );
  // Keys compare as yaml compares them: scalars by value, in flow
  // mappings and nested ones too, a collection never equal to another.
  for (
    const dup of [
      "a: 1\nb:\n  c: 1\n  c: 2",
      "x: {a: 1, a: 2}",
      "100: a\n1e2: b",
    ]
  ) {
    assert.throws(
      () => splitFrontmatter(md(dup), "s.md"),
      /Map keys must be unique/,
    );
  }
  assert.deepEqual(
    splitFrontmatter(md('1: a\n"1": b\n? [x]\n: c\n? [x]\n: d'), "s.md").data,
    { 1: "b", "[ x ]": "d" },
  );
});

Deno.test("parseSkillMd() keeps a bounded number of warnings, each one line long at most", () => {
  // Every non-string metadata value is a warning: a full file made about
  // 29,000, served with every discover at 11 times the file's size.
  const keys: string[] = [];
  for (let i = 0, size = 0; size < MAX_FRONTMATTER_CHARS - 200; i++) {
    keys.push(` k${i.toString(36)}: 1`);
    size += keys.at(-1)!.length + 1;
  }
  const text = md(`name: a\ndescription: A\nmetadata:\n${keys.join("\n")}`);
  const m = parseSkillMd(text);
  assert.ok(m.warnings.length <= 101, `${m.warnings.length} warnings`);
  assert.match(m.warnings.at(-1)!, /more warnings were left out/);
  assert.ok(JSON.stringify(m.metadata).length < 4 * text.length);
  // A warning quoting a value quotes a bounded part of it.
  const big = parseSkillMd(
    md(`name: a\ndescription: A\nmax_turns: "${"x".repeat(30_000)}"`),
  );
  assert.equal(big.warnings.length, 1);
  assert.ok(big.warnings[0]!.length <= 500, `${big.warnings[0]!.length}`);
  assert.match(
    big.warnings[0]!,
    /^field "max_turns" must be a positive integer/,
  );
});

Deno.test("parseSkillMd() words a warning that quotes a hostile key as one printable line", () => {
  // Warnings are served with every discover and shown in the console and
  // the banner: a key's newline or escape must not start a forged line.
  const m = parseSkillMd(
    md(
      'name: a\ndescription: A\nmetadata:\n  "k\\e[2J\\nskillbox warning: forged\\u2028": 1',
    ),
  );
  assert.deepEqual(m.warnings, [
    'field "metadata.k\\u001b[2J\\u000askillbox warning: forged\\u2028" should be a string (the specification\'s metadata is a string map)',
  ]);
});

Deno.test("splitFrontmatter() refuses a frontmatter past its own bound before parsing it", () => {
  // yaml reads a full-size file of short keys or flow items in seconds,
  // all of them on the host's one thread; real frontmatter is a few KiB.
  // Never closed, this list is also a YAML error: parsed first, it would
  // be refused as one.
  const items = `x: [${"1,".repeat(100_000)}1`;
  assert.throws(
    () => splitFrontmatter(md(`name: a\ndescription: A\n${items}`), "s.md"),
    /Cannot load "s\.md": the YAML frontmatter is longer than 32768 characters$/,
  );
  assert.equal(MAX_FRONTMATTER_CHARS, 32 * 1024);
});
