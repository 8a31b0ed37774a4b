import assert from "node:assert/strict";
import { join } from "node:path";
import {
  readFrontmatter,
  type RemoteSkill,
  type ServedFolder,
  sha256Digest,
  SkillFileCache,
  SkillsServer,
} from "./skills_extension.ts";

interface Listed {
  skills: { uri: string }[];
  nextCursor?: string;
}

async function folders(names: string[]): Promise<{
  dir: string;
  served: ServedFolder[];
}> {
  const dir = await Deno.makeTempDir();
  const served: ServedFolder[] = [];
  for (const name of names) {
    await Deno.mkdir(join(dir, name));
    await Deno.writeTextFile(
      join(dir, name, "SKILL.md"),
      `---\nname: ${name}\ndescription: Skill ${name}\n---\nDo ${name}.\n`,
    );
    served.push({ name, folder: join(dir, name), file: "SKILL.md" });
  }
  return { dir, served };
}

Deno.test("skills/list pages with nextCursor until the last page, and refuses a cursor it never gave", async () => {
  const { dir, served } = await folders(["a", "b", "c", "d", "e"]);
  const skills = new SkillsServer(
    { folders: () => Promise.resolve(served) },
    { cache: new SkillFileCache(), pageSize: 2 },
  );
  try {
    const uris: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await skills.handle(
        "skills/list",
        cursor ? { cursor } : {},
      ) as Listed;
      uris.push(...page.skills.map((s) => s.uri));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(uris, [
      "skill://a/SKILL.md",
      "skill://b/SKILL.md",
      "skill://c/SKILL.md",
      "skill://d/SKILL.md",
      "skill://e/SKILL.md",
    ]);
    for (const cursor of ["x", "-1", "99", 3]) {
      await assert.rejects(
        skills.handle("skills/list", { cursor })!,
        (e: Error & { code: number }) => e.code === -32602,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a skill's entry changes with its files, and a folder named unlike its skill is not served", async () => {
  const { dir, served } = await folders(["notes"]);
  await Deno.mkdir(join(dir, "other"));
  await Deno.writeTextFile(
    join(dir, "other", "SKILL.md"),
    "---\nname: notes-two\ndescription: Misplaced\n---\n",
  );
  const skills = new SkillsServer({
    folders: () =>
      Promise.resolve([
        ...served,
        { name: "notes-two", folder: join(dir, "other"), file: "SKILL.md" },
      ]),
  }, { cache: new SkillFileCache() });
  try {
    const first = await skills.handle("skills/list", {}) as {
      skills: { uri: string; resources: { digest: string }[] }[];
    };
    assert.deepEqual(first.skills.map((s) => s.uri), [
      "skill://notes/SKILL.md",
    ]);
    // A BOM is content: the text returned keeps it, so its bytes match.
    await Deno.writeTextFile(join(dir, "notes", "extra.md"), "\uFEFFextra");
    const second = await skills.handle("skills/get", {
      uri: "skill://notes/SKILL.md",
    }) as { skill: { resources: { uri: string; size: number }[] } };
    assert.deepEqual(second.skill.resources.map((r) => [r.uri, r.size]), [
      ["skill://notes/SKILL.md", 55],
      ["skill://notes/extra.md", 8],
    ]);
    const read = await skills.handle("resources/read", {
      uri: "skill://notes/extra.md",
    }) as { contents: { text: string }[] };
    assert.equal(new TextEncoder().encode(read.contents[0]!.text).length, 8);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("resources/read answers a listed file whose name starts with two dots", async () => {
  const { dir, served } = await folders(["notes"]);
  await Deno.writeTextFile(join(dir, "notes", "..draft.md"), "draft");
  const skills = new SkillsServer(
    { folders: () => Promise.resolve(served) },
    { cache: new SkillFileCache() },
  );
  try {
    const got = await skills.handle("skills/get", {
      uri: "skill://notes/SKILL.md",
    }) as { skill: { resources: { uri: string }[] } };
    const uri = "skill://notes/..draft.md";
    assert.ok(got.skill.resources.some((r) => r.uri === uri));
    const read = await skills.handle("resources/read", { uri }) as {
      contents: { text?: string }[];
    };
    assert.equal(read.contents[0]?.text, "draft");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("resources/read stops when its request is cancelled, and answers nothing", async () => {
  const { dir, served } = await folders(["a"]);
  const cancel = new AbortController();
  const skills = new SkillsServer({
    // The client cancels while the host looks for the file.
    folders: () => {
      cancel.abort(new Error("cancelled by the client"));
      return Promise.resolve(served);
    },
  }, { cache: new SkillFileCache() });
  try {
    await assert.rejects(
      skills.handle(
        "resources/read",
        { uri: "skill://a/SKILL.md" },
        cancel.signal,
      )!,
      /cancelled by the client/,
    );
    // Not cancelled: read.
    const read = await skills.handle("resources/read", {
      uri: "skill://a/SKILL.md",
    }) as { contents: { text: string }[] };
    assert.match(read.contents[0]!.text, /Do a\./);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("resources/read of a server's skill file, cancelled, cancels the server's read", async () => {
  const uri = "skill://a/SKILL.md";
  const asked = Promise.withResolvers<AbortSignal | undefined>();
  const remote: RemoteSkill = {
    name: "kit__a",
    server: "kit",
    entry: {
      uri,
      frontmatter: { name: "a", description: "A" },
      resources: [{ uri, size: 1, digest: `sha256:${"0".repeat(64)}` }],
    },
    // A server that answers only when the host gives up on its read.
    read: (_uri, signal) => {
      asked.resolve(signal);
      return new Promise((_, reject) => {
        signal?.addEventListener("abort", () => reject(signal.reason));
      });
    },
  };
  const skills = new SkillsServer({
    folders: () => Promise.resolve([]),
    remote: () => Promise.resolve([remote]),
  }, { cache: new SkillFileCache() });
  const cancel = new AbortController();
  const answer = skills.handle("resources/read", {
    uri: "mcp-skill://kit/a/SKILL.md",
  }, cancel.signal)!;
  const signal = await asked.promise;
  cancel.abort(new Error("cancelled by the client"));
  // Before: the read got no signal and ran on to its timeout, while the
  // client's place among its reads in flight was free again: a client
  // reading and cancelling had as many reads on the server as it sent.
  assert.equal(signal?.aborted, true, "the server's read was not cancelled");
  await assert.rejects(answer, /cancelled by the client/);
});

Deno.test("a uri or cursor that is no string is refused as InvalidParams, never turned into a string", async () => {
  const { dir, served } = await folders(["a"]);
  const skills = new SkillsServer(
    { folders: () => Promise.resolve(served) },
    { cache: new SkillFileCache() },
  );
  try {
    // JSON.parse makes `toString` an own key: String() on it throws a
    // TypeError, answered InternalError (-32603).
    const odd = JSON.parse('{"toString":{"polluted":"yes"},"x":1}');
    for (
      const [method, params, field] of [
        ["skills/get", { uri: odd }, "uri"],
        ["resources/read", { uri: odd }, "uri"],
        ["resources/directory/read", { uri: odd }, "uri"],
        ["resources/read", { uri: 5 }, "uri"],
        ["skills/list", { cursor: odd }, "cursor"],
        [
          "resources/directory/read",
          { uri: "skill://a", cursor: odd },
          "cursor",
        ],
      ] as const
    ) {
      await assert.rejects(
        async () => await skills.handle(method, params),
        (error: Error & { code?: number }) => {
          assert.equal(error.code, -32602, `${method}: ${error.message}`);
          assert.equal(
            error.message,
            `Invalid ${method} request: params.${field} must be a string`,
          );
          return true;
        },
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readFrontmatter() reads a SKILL.md as the skill loader does", async (t) => {
  await t.step("a byte-order mark and CRLF lines", () => {
    assert.deepEqual(
      readFrontmatter(
        "\ufeff---\r\nname: bom\r\ndescription: d\r\n---\r\nbody\r\n",
      ),
      { name: "bom", description: "d" },
    );
  });
  await t.step("aliases that would expand past the loader's bound", () => {
    // 40 short lines; each level names the one before nine times, so the
    // value written out (as skills/list sends an imported server's
    // frontmatter) would be 9^12 leaves.
    const lines = [
      "---",
      "name: x",
      "description: d",
      "l0: &l0 [a,a,a,a,a,a,a,a,a]",
    ];
    for (let i = 1; i < 12; i++) {
      lines.push(`l${i}: &l${i} [${Array(9).fill(`*l${i - 1}`).join(",")}]`);
    }
    lines.push("---", "");
    assert.equal(readFrontmatter(lines.join("\n")), null);
  });
});

Deno.test("a file named like an Object.prototype key gets a string mime type", async () => {
  const { dir, served } = await folders(["odd"]);
  for (const name of ["x.__proto__", "x.constructor"]) {
    await Deno.writeTextFile(join(dir, "odd", name), "hi");
  }
  const skills = new SkillsServer(
    { folders: () => Promise.resolve(served) },
    { cache: new SkillFileCache() },
  );
  try {
    // Before: `MIME[ext]` found `Object` for "constructor", and the
    // answer went out with no mime type (a function is no JSON).
    const listed = await skills.handle("resources/directory/read", {
      uri: "skill://odd",
    }) as { resources: { name: string; mimeType: unknown }[] };
    for (const r of listed.resources) {
      assert.equal(typeof r.mimeType, "string", r.name);
    }
    for (const name of ["x.__proto__", "x.constructor"]) {
      const read = await skills.handle("resources/read", {
        uri: `skill://odd/${name}`,
      }) as { contents: { mimeType: unknown }[] };
      assert.equal(read.contents[0]?.mimeType, "application/octet-stream");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a server's skill nested in another of its skills is found at its own URIs", async () => {
  const text = (s: string) => new TextEncoder().encode(s);
  const files: Record<string, Uint8Array> = {
    "skill://a/SKILL.md": text("---\nname: a\ndescription: A\n---\nA"),
    "skill://a/b/SKILL.md": text("---\nname: b\ndescription: B\n---\nB"),
  };
  const remote = async (name: string, uri: string): Promise<RemoteSkill> => ({
    name: `kit__${name}`,
    server: "kit",
    entry: {
      uri,
      frontmatter: { name, description: name.toUpperCase() },
      resources: [{
        uri,
        size: files[uri]!.length,
        digest: await sha256Digest(files[uri]!),
      }],
    },
    read: (u) => Promise.resolve(files[u]!),
  });
  const remotes = [
    await remote("a", "skill://a/SKILL.md"),
    await remote("b", "skill://a/b/SKILL.md"),
  ];
  const skills = new SkillsServer({
    folders: () => Promise.resolve([]),
    remote: () => Promise.resolve(remotes),
  }, { cache: new SkillFileCache() });
  const uri = "mcp-skill://kit/a/b/SKILL.md";
  // Before: skill a, whose root prefixes the URI, answered for it.
  const got = await skills.handle("skills/get", { uri }) as {
    skill: { uri: string };
  };
  assert.equal(got.skill.uri, uri);
  const read = await skills.handle("resources/read", { uri }) as {
    contents: { text: string }[];
  };
  assert.match(read.contents[0]!.text, /\nB$/);
  const outer = await skills.handle("resources/read", {
    uri: "mcp-skill://kit/a/SKILL.md",
  }) as { contents: { text: string }[] };
  assert.match(outer.contents[0]!.text, /\nA$/);
});

Deno.test("SkillFileCache forgets the folders least recently walked past 1024", async () => {
  const cache = new SkillFileCache();
  const dir = await Deno.makeTempDir();
  const file = join(dir, "a.txt");
  const digestOf = async () => {
    const walk = cache.walk(dir);
    const digest = await walk.digest(file, "2:0");
    walk.done();
    return digest;
  };
  try {
    await Deno.writeTextFile(file, "aa");
    const first = await digestOf();
    // Same stamp: the cached digest is kept.
    await Deno.writeTextFile(file, "bb");
    assert.equal(await digestOf(), first);
    // Before: one entry per folder ever walked, kept for ever.
    for (let i = 0; i < 1024; i++) cache.walk(join(dir, `gone${i}`)).done();
    assert.notEqual(await digestOf(), first, "the folder was forgotten");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("resources/directory/read lists the folders the manifest's files are in, and only those", async () => {
  const { dir, served } = await folders(["tidy"]);
  await Deno.mkdir(join(dir, "tidy", "empty"));
  await Deno.mkdir(join(dir, "tidy", "linked"));
  await Deno.symlink("/etc/hostname", join(dir, "tidy", "linked", "host"));
  await Deno.mkdir(join(dir, "tidy", "ref", "deep"), { recursive: true });
  await Deno.writeTextFile(join(dir, "tidy", "ref", "deep", "a.md"), "a");
  await Deno.writeTextFile(join(dir, "tidy", "ref", "b 1.md"), "b");
  const skills = new SkillsServer(
    { folders: () => Promise.resolve(served) },
    { cache: new SkillFileCache() },
  );
  const children = async (uri: string) =>
    ((await skills.handle("resources/directory/read", { uri })) as {
      resources: { uri: string; name: string; mimeType: string }[];
    }).resources.map((r) => [r.uri, r.name, r.mimeType]);
  try {
    // Before: "empty" and "linked" were listed as folders holding nothing
    // the manifest (skills/get) lists.
    assert.deepEqual(await children("skill://tidy"), [
      ["skill://tidy/SKILL.md", "SKILL.md", "text/markdown"],
      ["skill://tidy/ref", "ref", "inode/directory"],
    ]);
    assert.deepEqual(await children("skill://tidy/ref"), [
      ["skill://tidy/ref/b%201.md", "b 1.md", "text/markdown"],
      ["skill://tidy/ref/deep", "deep", "inode/directory"],
    ]);
    for (const uri of ["skill://tidy/empty", "skill://tidy/SKILL.md"]) {
      await assert.rejects(
        skills.handle("resources/directory/read", { uri })!,
        /is not a directory resource/,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
