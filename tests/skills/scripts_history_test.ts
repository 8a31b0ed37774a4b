/**
 * A script's workspace is kept with the skill run's history record when
 * the run store is on (within its caps, saying what was left out), never
 * when it is off, and the temporary folder is removed either way.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHost } from "../../runtime/host.ts";
import { parseConfig } from "../../runtime/config.ts";
import { openSqliteStore } from "../../runtime/store/sqlite.ts";
import { startMockOpenAI } from "../support/mock_openai.ts";
import { connectA2e } from "../support/skills_host.ts";
import type { SkillResult } from "../../protocol/skill.ts";

const FIXTURES = fileURLToPath(
  new URL("../fixtures/skills/history/", import.meta.url),
);

// Runs `fn` with a private temporary folder (other tests on the machine
// make script workspaces in the shared one), then returns the script
// workspaces left in it.
async function leftWorkspaces(fn: () => Promise<void>): Promise<string[]> {
  const tmp = await Deno.makeTempDir();
  const old = Deno.env.get("TMPDIR");
  Deno.env.set("TMPDIR", tmp);
  try {
    // The runner's Deno.makeTempDir() lands there.
    const probe = await Deno.makeTempDir({ prefix: "probe-" });
    assert.ok(probe.startsWith(tmp + "/"));
    await Deno.remove(probe);
    await fn();
    return [...Deno.readDirSync(tmp)].filter((e) =>
      e.name.startsWith("skillbox-script-")
    ).map((e) => e.name);
  } finally {
    if (old === undefined) Deno.env.delete("TMPDIR");
    else Deno.env.set("TMPDIR", old);
    await Deno.remove(tmp, { recursive: true });
  }
}

// Runs workspace-writer twice in one skill call on a host with `store`.
async function runWriter(store: unknown): Promise<Record<string, unknown>[]> {
  const mock = await startMockOpenAI((req) => {
    const tools = (req.body.messages as { role: string }[]).filter((m) =>
      m.role === "tool"
    );
    return tools.length >= 2 ? { tokens: ["done"] } : {
      tool_calls: [{
        name: "run_skill_script",
        arguments: { script: "scripts/write.sh" },
      }],
    };
  });
  const host = createHost({
    config: parseConfig(JSON.stringify({
      skills: [FIXTURES],
      builtin_skills: false,
      sandbox: { cache_dir: null },
      store,
      llm: [{
        provider_name: "openai",
        provider_credentials: { api_key: "test-key" },
        provider_config: { base_url: mock.url, model: "mock-model" },
        is_default: true,
      }],
    })),
  });
  try {
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    await host.ready;
    const agent = await connectA2e(url.replace("http", "ws") + "/a2e");
    const resp = await agent.request({
      type: "skill/call/req",
      name: "workspace-writer",
      arguments: { task: "write" },
      timeout: 30,
    });
    const result = resp.message.data as SkillResult;
    assert.equal(result.success, true, result.error ?? "");
    await agent.close();
    const messages = mock.requests.at(-1)!.body.messages as {
      role: string;
      content: string;
    }[];
    return messages.filter((m) => m.role === "tool").map((m) =>
      JSON.parse(m.content)
    );
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await mock.close();
  }
}

Deno.test(
  "with the store on, the files a script wrote are kept with the skill run, capped, and the workspace is removed",
  { sanitizeOps: false, sanitizeResources: false },
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      const db = join(dir, "runs.db");
      let fed: Record<string, unknown>[] = [];
      assert.deepEqual(
        await leftWorkspaces(async () => {
          fed = await runWriter({
            path: db,
            script_files_max_bytes: 60,
            script_files_max: 4,
          });
        }),
        [],
      );
      assert.equal(fed.length, 2);
      // Sorted: a.txt (6), big.bin (100: over), n1.txt (2), n2.txt (2);
      // n3.txt and sub/deep.txt not listed.
      assert.deepEqual(fed[0]!.kept_for_history, {
        files: 3,
        bytes: 10,
        truncated: true,
      });
      // The run's 4 files are listed: the second call keeps nothing.
      assert.deepEqual(fed[1]!.kept_for_history, {
        files: 0,
        bytes: 0,
        truncated: true,
      });
      const store = openSqliteStore(db);
      try {
        const [run] = store.list({ kind: "skill" }).runs;
        const files = store.get(run!.id)!.files!;
        const text = (name: string) => {
          const f = store.file(
            run!.id,
            files.findIndex((f) => f.name === name),
          );
          return f?.data ? new TextDecoder().decode(f.data) : null;
        };
        assert.deepEqual(files.map((f) => f.name), [
          "1/a.txt",
          "1/big.bin",
          "1/n1.txt",
          "1/n2.txt",
          "…",
        ]);
        assert.equal(text("1/a.txt"), "hello\n");
        assert.equal(text("1/n2.txt"), "2\n");
        const big = files.find((f) => f.name === "1/big.bin")!;
        assert.equal(store.file(run!.id, files.indexOf(big))!.data, null);
        assert.equal(big.size, 100);
        assert.match(big.note!, /over the 60-byte cap/);
        // Two of the first call's, six of the second's.
        assert.match(files[4]!.note!, /^8 more files not listed \(cap: 4/);
      } finally {
        store.close();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test(
  "with the store off, nothing is kept and the workspace is removed",
  { sanitizeOps: false, sanitizeResources: false },
  async () => {
    let fed: Record<string, unknown>[] = [];
    assert.deepEqual(
      await leftWorkspaces(async () => {
        fed = await runWriter(null);
      }),
      [],
    );
    assert.equal(fed.length, 2);
    assert.equal(fed[0]!.stdout_tail, "wrote\n");
    assert.equal(fed[0]!.kept_for_history, undefined);
  },
);
