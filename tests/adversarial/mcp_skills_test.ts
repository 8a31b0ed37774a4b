/**
 * Hostile reads of Skills over MCP (SEP-2640) against a real host: a skill
 * folder holding symbolic links out of it (to `/etc/passwd`, to `/etc`),
 * `..` and percent-encoded traversal in `skill://` URIs, another skill's or
 * an unserved folder's URIs, and a listed file swapped for a link after the
 * listing. Nothing outside a served skill's folder is ever listed or read.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  ErrorCode,
  type McpError,
  ResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { withHost } from "../mcp/_host.ts";
import { connectMcp } from "../support/mcp_client.ts";

interface Entry {
  uri: string;
  resources: { uri: string }[];
}

async function request<T>(
  client: Client,
  method: string,
  params: Record<string, unknown>,
): Promise<T> {
  return await client.request({ method, params } as never, ResultSchema) as T;
}

async function setup(skills: string): Promise<void> {
  await Deno.mkdir(join(skills, "notes", "reference"), { recursive: true });
  await Deno.writeTextFile(
    join(skills, "notes", "SKILL.md"),
    "---\nname: notes\ndescription: Notes\n---\nSee reference/guide.md.\n",
  );
  await Deno.writeTextFile(
    join(skills, "notes", "reference", "guide.md"),
    "ok",
  );
  await Deno.writeTextFile(join(skills, "notes", "swapped.md"), "innocent");
  await Deno.symlink("/etc/passwd", join(skills, "notes", "passwd"));
  await Deno.symlink("/etc", join(skills, "notes", "etc"));
  // A folder beside the skill, with no SKILL.md: never served.
  await Deno.mkdir(join(skills, "private"));
  await Deno.writeTextFile(join(skills, "private", "secret.txt"), "SECRET");
  // A skill the rules keep out of skills/list.
  await Deno.mkdir(join(skills, "Bad_Name"));
  await Deno.writeTextFile(
    join(skills, "Bad_Name", "SKILL.md"),
    "---\nname: Bad_Name\ndescription: Misnamed\n---\nHi.\n",
  );
}

Deno.test("Skills over MCP never list or read a file outside a served skill's folder", async () => {
  await withHost({ setup }, async ({ url, skills }) => {
    const client = await connectMcp(url);
    try {
      const { skills: listed } = await request<{ skills: Entry[] }>(
        client,
        "skills/list",
        {},
      );
      const notes = listed.find((s) => s.uri === "skill://notes/SKILL.md")!;
      // Links are not followed: neither the link to a file nor to a folder.
      assert.deepEqual(notes.resources.map((r) => r.uri), [
        "skill://notes/SKILL.md",
        "skill://notes/reference/guide.md",
        "skill://notes/swapped.md",
      ]);
      assert.ok(!listed.some((s) => s.uri.includes("Bad_Name")));

      const refused = [
        "skill://notes/passwd",
        "skill://notes/etc/passwd",
        "skill://notes/../private/secret.txt",
        "skill://notes/reference/../../private/secret.txt",
        "skill://notes/%2e%2e/private/secret.txt",
        "skill://notes/%2E%2E%2Fprivate%2Fsecret.txt",
        "skill://notes/reference%2F..%2F..%2Fprivate%2Fsecret.txt",
        "skill://notes//etc/passwd",
        "skill://notes/" +
        encodeURIComponent(join(skills, "private/secret.txt")),
        "skill://private/secret.txt",
        "skill://greet/../notes/swapped.md",
        "skill://Bad_Name/SKILL.md",
        "skill://../../etc/passwd",
        "file:///etc/passwd",
      ];
      for (const uri of refused) {
        await assert.rejects(
          request(client, "resources/read", { uri }),
          (e: McpError) => {
            assert.equal(e.code, ErrorCode.InvalidParams, uri);
            assert.doesNotMatch(e.message, /root:|SECRET/);
            return true;
          },
          uri,
        );
      }
      for (
        const uri of [
          "skill://notes/etc",
          "skill://notes/..",
          "skill://private",
        ]
      ) {
        await assert.rejects(
          request(client, "resources/directory/read", { uri }),
          (e: McpError) => e.code === ErrorCode.InvalidParams,
          uri,
        );
      }
      await assert.rejects(
        request(client, "skills/get", { uri: "skill://private/SKILL.md" }),
        (e: McpError) => e.code === ErrorCode.InvalidParams,
      );

      // A listed file swapped for a link after the listing is not read.
      await Deno.remove(join(skills, "notes", "swapped.md"));
      await Deno.symlink("/etc/passwd", join(skills, "notes", "swapped.md"));
      await assert.rejects(
        request(client, "resources/read", { uri: "skill://notes/swapped.md" }),
        (e: McpError) => {
          assert.equal(e.code, ErrorCode.InvalidParams);
          assert.doesNotMatch(e.message, /root:/);
          return true;
        },
      );
    } finally {
      await client.close();
    }
  });
});
