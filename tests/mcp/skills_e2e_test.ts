/**
 * Skills over MCP (SEP-2640) end to end: the official SDK's `Client`, over
 * Streamable HTTP and over stdio, against a real host serving Agent Skills
 * folders. `skills/list` and `skills/get` promise digests that
 * `resources/read` keeps (text, binary, a 1 MiB file), the files a
 * `SKILL.md` links are readable, directories list their children, a new
 * folder is announced with `notifications/resources/list_changed`, and a
 * folder whose name breaks the Agent Skills rules stays a tool but is not
 * listed as a skill.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ErrorCode,
  type McpError,
  ResourceListChangedNotificationSchema,
  ResultSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { writeFixtures } from "../support/mcp_fixtures.ts";
import { withHost } from "./_host.ts";
import { connectMcp, stdioHostArgs } from "../support/mcp_client.ts";

interface Entry {
  uri: string;
  frontmatter: Record<string, unknown>;
  resources: { uri: string; digest: string; size: number }[];
}

interface Contents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

const NOTES_MD = `---
name: notes
description: Takes notes the team's way
license: MIT
metadata:
  version: "2.1"
  tags: [a, b]
---
Read [the guide](reference/guide.md) first.
`;

/** A skills folder with `notes` (a guide, a binary, a 1 MiB file) and a misnamed one. */
async function writeSkills(skills: string): Promise<void> {
  await Deno.mkdir(join(skills, "notes", "reference", "deep"), {
    recursive: true,
  });
  await Deno.writeTextFile(join(skills, "notes", "SKILL.md"), NOTES_MD);
  await Deno.writeTextFile(
    join(skills, "notes", "reference", "guide.md"),
    "# Guide\n\nWrite short notes. ✓\n",
  );
  await Deno.writeFile(
    join(skills, "notes", "reference", "logo.png"),
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 0xff, 0xfe]),
  );
  const big = new Uint8Array(1 << 20);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7919) & 0xff;
  await Deno.writeFile(
    join(skills, "notes", "reference", "deep", "big.bin"),
    big,
  );
  await Deno.mkdir(join(skills, "Bad_Name"));
  await Deno.writeTextFile(
    join(skills, "Bad_Name", "SKILL.md"),
    "---\nname: Bad_Name\ndescription: Breaks the naming rules\n---\nHi.\n",
  );
}

async function request<T>(
  client: Client,
  method: string,
  params: Record<string, unknown> = {},
): Promise<T> {
  return await client.request(
    { method, params } as never,
    ResultSchema,
  ) as T;
}

function bytesOf(contents: Contents): Uint8Array {
  if (typeof contents.text === "string") {
    return new TextEncoder().encode(contents.text);
  }
  return Uint8Array.from(atob(contents.blob ?? ""), (c) => c.charCodeAt(0));
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(
    await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
  );
  return "sha256:" +
    Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Reads every file of every listed skill and checks it against its digest. */
async function verifyAll(client: Client): Promise<Entry[]> {
  const skills: Entry[] = [];
  let cursor: string | undefined;
  do {
    const page = await request<{ skills: Entry[]; nextCursor?: string }>(
      client,
      "skills/list",
      cursor ? { cursor } : {},
    );
    skills.push(...page.skills);
    cursor = page.nextCursor;
  } while (cursor);
  for (const skill of skills) {
    for (const file of skill.resources) {
      const read = await request<{ contents: Contents[] }>(
        client,
        "resources/read",
        { uri: file.uri },
      );
      const bytes = bytesOf(read.contents[0]!);
      assert.equal(bytes.length, file.size, file.uri);
      assert.equal(await sha256(bytes), file.digest, file.uri);
    }
  }
  return skills;
}

async function checkSession(client: Client): Promise<void> {
  const caps = client.getServerCapabilities();
  assert.deepEqual(caps?.extensions?.["io.modelcontextprotocol/skills"], {
    directoryRead: true,
  });
  assert.ok(caps?.resources);

  const skills = await verifyAll(client);
  // `greet` is the fixtures' own Agent Skills folder.
  assert.deepEqual(skills.map((s) => s.uri), [
    "skill://greet/SKILL.md",
    "skill://notes/SKILL.md",
  ]);
  const notes = skills[1]!;
  // Verbatim: every field the author wrote, nested ones included.
  assert.deepEqual(notes.frontmatter, {
    name: "notes",
    description: "Takes notes the team's way",
    license: "MIT",
    metadata: { version: "2.1", tags: ["a", "b"] },
  });
  assert.deepEqual(notes.resources.map((r) => r.uri), [
    "skill://notes/SKILL.md",
    "skill://notes/reference/deep/big.bin",
    "skill://notes/reference/guide.md",
    "skill://notes/reference/logo.png",
  ]);
  assert.equal(notes.resources[1]!.size, 1 << 20);

  const got = await request<{ skill: Entry; ttlMs: number }>(
    client,
    "skills/get",
    { uri: "skill://notes/SKILL.md" },
  );
  assert.deepEqual(got.skill, notes);
  assert.equal(typeof got.ttlMs, "number");

  // The linked guide, as the SKILL.md names it, relative to the skill root.
  const guide = await request<{ contents: Contents[] }>(
    client,
    "resources/read",
    { uri: "skill://notes/reference/guide.md" },
  );
  assert.equal(guide.contents[0]!.mimeType, "text/markdown");
  assert.match(guide.contents[0]!.text ?? "", /Write short notes/);
  const logo = await request<{ contents: Contents[] }>(
    client,
    "resources/read",
    { uri: "skill://notes/reference/logo.png" },
  );
  assert.equal(logo.contents[0]!.mimeType, "image/png");
  assert.equal(typeof logo.contents[0]!.blob, "string");

  const dir = await request<{ resources: { uri: string; mimeType: string }[] }>(
    client,
    "resources/directory/read",
    { uri: "skill://notes/reference" },
  );
  assert.deepEqual(dir.resources.map((r) => [r.uri, r.mimeType]), [
    ["skill://notes/reference/deep", "inode/directory"],
    ["skill://notes/reference/guide.md", "text/markdown"],
    ["skill://notes/reference/logo.png", "image/png"],
  ]);

  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((r: { uri: string }) => r.uri), [
    "skill://greet/SKILL.md",
    "skill://notes/SKILL.md",
  ]);

  // The misnamed folder is still a tool; it is just not a listed skill.
  const { tools } = await client.listTools();
  assert.ok(tools.some((t: Tool) => t.name === "Bad_Name"));
  await assert.rejects(
    request(client, "skills/get", { uri: "skill://Bad_Name/SKILL.md" }),
    (e: McpError) => e.code === ErrorCode.InvalidParams,
  );
}

Deno.test("Skills over MCP on HTTP: list, get, read and directory read keep the digests they promise", async () => {
  await withHost({ setup: writeSkills }, async ({ url, host }) => {
    const client = await connectMcp(url);
    try {
      await checkSession(client);
      const warnings = (await host.ready).warnings.join("\n");
      assert.match(warnings, /Bad_Name.*left out of MCP skills\/list/);
    } finally {
      await client.close();
    }
  });
});

Deno.test("Skills over MCP on HTTP: a new skill folder sends resources/list_changed and is listed", async () => {
  await withHost({ setup: writeSkills }, async ({ url, skills }) => {
    const client = await connectMcp(url);
    try {
      await request(client, "skills/list");
      const changed = Promise.withResolvers<void>();
      client.setNotificationHandler(
        ResourceListChangedNotificationSchema,
        () => changed.resolve(),
      );
      await Deno.mkdir(join(skills, "todo-list"));
      await Deno.writeTextFile(
        join(skills, "todo-list", "SKILL.md"),
        "---\nname: todo-list\ndescription: Keeps a to-do list\n---\nList.\n",
      );
      const timer = setTimeout(
        () => changed.reject(new Error("no list_changed within 10 s")),
        10_000,
      );
      await changed.promise.finally(() => clearTimeout(timer));
      const listed = await verifyAll(client);
      assert.deepEqual(listed.map((s) => s.uri), [
        "skill://greet/SKILL.md",
        "skill://notes/SKILL.md",
        "skill://todo-list/SKILL.md",
      ]);
    } finally {
      await client.close();
    }
  });
});

Deno.test("Skills over MCP on stdio: the same entries and digests", async () => {
  const skills = await Deno.makeTempDir();
  const markers = await Deno.makeTempDir();
  await writeFixtures(skills, markers);
  await writeSkills(skills);
  const config = join(skills, "..", `${crypto.randomUUID()}.jsonc`);
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      skills: [skills],
      builtin_skills: false,
      sandbox: { cache_dir: null },
    }),
  );
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: stdioHostArgs(config),
    stderr: "pipe",
  });
  const client = new Client({ name: "test", version: "1.0.0" });
  try {
    await client.connect(transport);
    await checkSession(client);
  } finally {
    await client.close();
    await Deno.remove(config);
    await Deno.remove(skills, { recursive: true });
    await Deno.remove(markers, { recursive: true });
  }
});
