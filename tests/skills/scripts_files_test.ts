/**
 * A skill script sees the session's filesystem-toolkit root at /files only
 * when the skill declares the toolkit, read-only unless the session's
 * configuration is writable (and the skill may write), only when the
 * operator's policy grants the root, and never another session's root.
 * Through the whole host built from a `skillbox.jsonc`.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHost } from "../../runtime/host.ts";
import { parseConfig } from "../../runtime/config.ts";
import { startMockOpenAI } from "../support/mock_openai.ts";
import { type A2eSocket, connectA2e } from "../support/skills_host.ts";
import type { SkillResult } from "../../protocol/skill.ts";

const FIXTURES = fileURLToPath(
  new URL("../fixtures/skills/files/", import.meta.url),
);

interface Fed {
  exit_code: number;
  stdout_tail: string;
  stderr_tail: string;
  files_root?: { path: string; writable: boolean };
  files_root_refused?: string;
}

Deno.test(
  "a script gets the session's filesystem root at /files as the policy and the skill allow, never another session's",
  { sanitizeOps: false, sanitizeResources: false },
  async () => {
    const base = await Deno.realPath(await Deno.makeTempDir());
    const dir = (name: string, text: string) => {
      Deno.mkdirSync(join(base, name));
      Deno.writeTextFileSync(join(base, name, "in.txt"), text);
      return join(base, name);
    };
    const a = dir("a", "A");
    const b = dir("b", "B");
    const outside = dir("outside", "SECRET");
    // Inside a granted folder, pointing outside every grant.
    Deno.symlinkSync(outside, join(a, "link"));
    // The model always runs the probe, then stops.
    const mock = await startMockOpenAI((req) => {
      const last = (req.body.messages as { role: string }[]).at(-1)!;
      return last.role === "tool" ? { tokens: ["done"] } : {
        tool_calls: [{
          name: "run_skill_script",
          arguments: { script: "scripts/probe.sh" },
        }],
      };
    });
    const config = parseConfig(JSON.stringify({
      skills: [FIXTURES],
      sandbox: { cache_dir: null },
      llm: [{
        provider_name: "openai",
        provider_credentials: { api_key: "test-key" },
        provider_config: { base_url: mock.url, model: "mock-model" },
        is_default: true,
      }],
      policy: { permissions: { read: [a, b], write: [a] } },
    }));
    const host = createHost({ config });
    const sockets: A2eSocket[] = [];
    try {
      const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
      await host.ready;
      const session = async (files: Record<string, unknown> | null) => {
        const agent = await connectA2e(url.replace("http", "ws") + "/a2e");
        sockets.push(agent);
        if (files) {
          const resp = await agent.request({
            type: "toolkit/configure/req",
            toolkit_name: "filesystem",
            config: files,
          });
          assert.equal(resp.message.status, "ok", String(resp.message.message));
        }
        return agent;
      };
      const run = async (agent: A2eSocket, skill: string): Promise<Fed> => {
        const resp = await agent.request({
          type: "skill/call/req",
          name: skill,
          arguments: { task: "probe" },
          timeout: 30,
        });
        const result = resp.message.data as SkillResult;
        assert.equal(result.success, true, result.error ?? "");
        const messages = mock.requests.at(-1)!.body.messages as {
          content: string;
        }[];
        return JSON.parse(messages.at(-1)!.content);
      };

      const one = await session({ root: a, writable: true });
      const two = await session({ root: b });

      // Writable configuration, toolkit declared: read and write.
      const wrote = await run(one, "files-probe");
      assert.equal(wrote.stdout_tail, "mounted: A\nWROTE\n", wrote.stderr_tail);
      assert.deepEqual(wrote.files_root, { path: "/files", writable: true });
      assert.equal(
        await Deno.readTextFile(join(a, "out.txt")),
        "written by a script\n",
      );
      await Deno.remove(join(a, "out.txt"));

      // The other session's own root, read-only: the write fails (EROFS).
      const readOnly = await run(two, "files-probe");
      assert.equal(readOnly.stdout_tail, "mounted: B\nWRITE-FAILED\n");
      assert.match(readOnly.stderr_tail, /Read-only file system/);
      assert.deepEqual(readOnly.files_root, {
        path: "/files",
        writable: false,
      });
      // ...and session one still gets its own root after two configured.
      assert.match(
        (await run(one, "files-probe")).stdout_tail,
        /^mounted: A\n/,
      );
      await Deno.remove(join(a, "out.txt"));

      // A skill declaring only read_file gets no writable mount.
      const reader = await run(one, "files-reader");
      assert.equal(reader.stdout_tail, "mounted: A\nWRITE-FAILED\n");
      assert.match(reader.stderr_tail, /Read-only file system/);

      // A skill that does not declare the toolkit: no mount at all.
      const blind = await run(one, "files-blind");
      assert.equal(blind.stdout_tail, "no /files\nWRITE-FAILED\n");
      assert.equal(blind.files_root, undefined);
      assert.equal(blind.files_root_refused, undefined);

      // A root outside the policy, a write the policy does not grant, a
      // link out of a granted folder: refused, nothing mounted.
      for (
        const [cfg, why] of [
          [{ root: outside }, /"read" for ".*outside" exceeds the host policy/],
          [
            { root: b, writable: true },
            /"write" for ".*b" exceeds the host policy/,
          ],
          [{ root: join(a, "link") }, /is a link to ".*outside": .*exceeds/],
        ] as const
      ) {
        const refused = await run(await session(cfg), "files-probe");
        assert.equal(refused.stdout_tail, "no /files\nWRITE-FAILED\n");
        assert.match(refused.files_root_refused ?? "", why);
        assert.equal(refused.files_root, undefined);
      }
      // A session with no configuration: nothing mounted, nothing refused.
      const none = await run(await session(null), "files-probe");
      assert.equal(none.stdout_tail, "no /files\nWRITE-FAILED\n");
      assert.equal(none.files_root_refused, undefined);
      assert.equal(await Deno.readTextFile(join(outside, "in.txt")), "SECRET");
    } finally {
      for (const s of sockets) await s.close();
      await host.close({ timeoutSeconds: 1 });
      await mock.close();
      await Deno.remove(base, { recursive: true });
    }
  },
);
