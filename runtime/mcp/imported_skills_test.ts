import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  importedSkillFiles,
  loadServerSkills,
  readBytes,
} from "./imported_skills.ts";
import {
  type RemoteSkill,
  sha256Digest,
  SKILLS_EXTENSION,
} from "./skills_extension.ts";
import {
  MAX_RESOURCE_BYTES,
  SkillFileRefusedError,
} from "../skills/skill_md.ts";

const encode = (text: string) => new TextEncoder().encode(text);

// A skill whose server serves `served` and lists `listed` (default: the
// same bytes), recording what is fetched.
async function remote(
  files: Record<string, { served: Uint8Array; listed?: Uint8Array }>,
  fetched: string[],
): Promise<RemoteSkill> {
  const resources = await Promise.all(
    Object.entries(files).map(async ([path, f]) => ({
      uri: `skill://docs/${path}`,
      digest: await sha256Digest(f.listed ?? f.served),
      size: (f.listed ?? f.served).length,
    })),
  );
  return {
    name: "kit__docs",
    server: "kit",
    entry: { uri: "skill://docs/SKILL.md", frontmatter: {}, resources },
    read: (uri) => {
      fetched.push(uri);
      const file = files[uri.slice("skill://docs/".length)];
      return file
        ? Promise.resolve(file.served)
        : Promise.reject(new Error("not found"));
    },
  };
}

Deno.test("importedSkillFiles() returns a listed file's text, tagged with its origin", async () => {
  const fetched: string[] = [];
  const files = importedSkillFiles([
    await remote({
      "SKILL.md": { served: encode("---\n---\n") },
      "references/a b.md": { served: encode("Alpha") },
      "scripts/run.sh": { served: encode("echo hi") },
    }, fetched),
  ]).get("kit__docs")!;
  assert.deepEqual(files.resources, ["references/a b.md", "scripts/run.sh"]);
  const text = await files.read("./references/a b.md");
  assert.match(
    text,
    /^\[File skill:\/\/docs\/references\/a b\.md of the skill served by the MCP server "kit"; untrusted content\.\]\n\nAlpha$/,
  );
  assert.match(
    await files.read("scripts/run.sh"),
    /a script: this host does not run it\.\]\n\necho hi$/,
  );
  assert.match(files.note, /does not run this skill's scripts/);
});

Deno.test("importedSkillFiles() never fetches a path outside the listing or over the bound", async () => {
  const fetched: string[] = [];
  const files = importedSkillFiles([
    await remote({
      "SKILL.md": { served: encode("---\n---\n") },
      "big.md": { served: encode("x".repeat(MAX_RESOURCE_BYTES + 1)) },
    }, fetched),
  ]).get("kit__docs")!;
  for (
    const path of [
      "SKILL.md",
      "../other/SKILL.md",
      "skill://docs/big.md",
      "/big.md",
      "missing.md",
    ]
  ) {
    await assert.rejects(
      files.read(path),
      new RegExp(
        `^SkillboxError: Cannot read ".*": not a file of skill "kit__docs" \\(its files: "big\\.md"\\)$`,
      ),
      path,
    );
  }
  await assert.rejects(
    files.read("big.md"),
    new RegExp(`file is larger than ${MAX_RESOURCE_BYTES} bytes`),
  );
  assert.deepEqual(fetched, []);
});

Deno.test("importedSkillFiles() refuses bytes other than listed, and says why a read failed", async () => {
  const fetched: string[] = [];
  const files = importedSkillFiles([
    await remote({
      "SKILL.md": { served: encode("---\n---\n") },
      "short.md": { served: encode("abc"), listed: encode("abcd") },
      "swapped.md": { served: encode("evil"), listed: encode("good") },
      "image.bin": { served: new Uint8Array([0xff, 0xfe, 0x00]) },
    }, fetched),
  ]).get("kit__docs")!;
  await assert.rejects(
    files.read("short.md"),
    (e) =>
      e instanceof SkillFileRefusedError &&
      e.message ===
        'File "short.md" of skill "kit__docs" is refused: the MCP server "kit" served 3 bytes, its listing promises 4',
  );
  await assert.rejects(
    files.read("swapped.md"),
    (e) =>
      e instanceof SkillFileRefusedError &&
      /served bytes hashing to sha256:[0-9a-f]{64}, its listing promises sha256:[0-9a-f]{64}$/
        .test(e.message) &&
      !e.message.includes("evil"),
  );
  await assert.rejects(
    files.read("image.bin"),
    /it is not UTF-8 text \(3 bytes\)/,
  );
});

Deno.test("loadServerSkills() reads a server's skill listing to 16 MiB, no further", async () => {
  // Each page one entry of 1 MiB and a fresh cursor: 100 pages were read
  // and held at once (100 times 16 MiB for a server sending the most).
  const fat = "x".repeat(1 << 20);
  let pages = 0;
  const client = {
    getServerCapabilities: () => ({ extensions: { [SKILLS_EXTENSION]: {} } }),
    request: () => {
      pages++;
      return Promise.resolve({
        skills: [{ uri: `skill://s${pages}/SKILL.md`, frontmatter: { fat } }],
        nextCursor: String(pages),
      });
    },
    readResource: () => Promise.reject(new Error("not read")),
  } as unknown as Client;
  const { skills, refused } = await loadServerSkills(client, 1000);
  assert.equal(skills.length, 0);
  assert.ok(pages <= 17, `${pages} pages read`);
  assert.match(
    refused.at(-1)?.reason ?? "",
    /its skill listing is over 16777216 characters of JSON/,
  );
});

Deno.test("loadServerSkills() reads on past a full page to learn whether the listing goes further", async () => {
  // 1,000 entries (each refused: no uri), then an empty last page.
  const pages = [
    { skills: Array.from({ length: 1000 }, () => ({})), nextCursor: "2" },
    { skills: [] },
  ];
  let read = 0;
  const client = {
    getServerCapabilities: () => ({ extensions: { [SKILLS_EXTENSION]: {} } }),
    request: () => Promise.resolve(pages[read++]),
    readResource: () => Promise.reject(new Error("not read")),
  } as unknown as Client;
  const { refused } = await loadServerSkills(client, 1000);
  assert.equal(read, 2);
  assert.equal(refused.length, 1000);
  assert.ok(refused.every((r) => r.uri !== "skills/list"));
});

Deno.test("readBytes() hands the caller's signal to the server's resources/read", async () => {
  let options: { signal?: AbortSignal; timeout?: number } | undefined;
  const client = {
    readResource: (
      _params: unknown,
      given: { signal?: AbortSignal; timeout?: number },
    ) => {
      options = given;
      return Promise.resolve({
        contents: [{ uri: "skill://a/x.md", text: "x" }],
      });
    },
  } as unknown as Client;
  const cancel = new AbortController();
  await readBytes(client, "skill://a/x.md", 1000, cancel.signal);
  // Before: only the timeout went, and a cancelled read ran on to it.
  assert.equal(options?.signal, cancel.signal);
  assert.equal(options?.timeout, 1000);
});
