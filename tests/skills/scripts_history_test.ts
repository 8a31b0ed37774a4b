/**
 * A script's workspace is kept with the skill run's history record when
 * the run store is on (within its caps, saying what was left out), never
 * when it is off, and the temporary folder is removed either way.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openSqliteStore } from "../../runtime/store/sqlite.ts";
import { startHostProcess } from "../adversarial/_host_process.ts";
import { startMockOpenAI } from "../support/mock_openai.ts";
import { connectA2e } from "../support/skills_host.ts";
import type { SkillResult } from "../../protocol/skill.ts";

const FIXTURES = fileURLToPath(
  new URL("../fixtures/skills/history/", import.meta.url),
);

/** What one skill call of workspace-writer left. */
interface Written {
  /** The results of its two script runs, as the model was fed them. */
  fed: Record<string, unknown>[];
  /** The script workspaces left in the host's temporary folder. */
  left: string[];
}

// Runs workspace-writer twice in one skill call on a host with `store`, in
// a process of its own with a private temporary folder (where the runner's
// Deno.makeTempDir() lands: other tests make script workspaces in the
// shared one, and `deno test --parallel` shares this process's TMPDIR).
async function runWriter(store: unknown): Promise<Written> {
  const tmp = await Deno.makeTempDir();
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
  try {
    const host = await startHostProcess({
      skills: [FIXTURES],
      store,
      llm: [{
        provider_name: "openai",
        provider_credentials: { api_key: "test-key" },
        provider_config: { base_url: mock.url, model: "mock-model" },
        is_default: true,
      }],
    }, { env: { TMPDIR: tmp } });
    try {
      // The runner makes workspaces with Deno.makeTempDir(): in this folder
      // when the host's TMPDIR names it (else no workspace left would prove
      // nothing).
      assert.ok(
        (await environ(host.pid)).includes(`TMPDIR=${tmp}`),
        `the host's TMPDIR is not ${tmp}`,
      );
      const agent = await connectA2e(host.url.replace("http", "ws") + "/a2e");
      const resp = await agent.request({
        type: "skill/call/req",
        name: "workspace-writer",
        arguments: { task: "write" },
        timeout: 30,
      });
      const result = resp.message.data as SkillResult;
      assert.equal(result.success, true, result.error ?? "");
      await agent.close();
    } finally {
      await host[Symbol.asyncDispose]();
    }
    const messages = mock.requests.at(-1)!.body.messages as {
      role: string;
      content: string;
    }[];
    return {
      fed: messages.filter((m) => m.role === "tool").map((m) =>
        JSON.parse(m.content)
      ),
      left: entries(tmp).filter((name) => name.startsWith("skillbox-script-")),
    };
  } finally {
    await mock.close();
    await Deno.remove(tmp, { recursive: true });
  }
}

// `cat`, not a read: Deno wants --allow-all for /proc/<pid>.
async function environ(pid: number): Promise<string[]> {
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/environ`] })
    .output();
  return new TextDecoder().decode(out.stdout).split("\0");
}

function entries(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name);
}

Deno.test(
  "with the store on, the files a script wrote are kept with the skill run, capped, and the workspace is removed",
  { sanitizeOps: false, sanitizeResources: false },
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      const db = join(dir, "runs.db");
      const { fed, left } = await runWriter({
        path: db,
        script_files_max_bytes: 60,
        script_files_max: 4,
      });
      assert.deepEqual(left, []);
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
    const { fed, left } = await runWriter(null);
    assert.deepEqual(left, []);
    assert.equal(fed.length, 2);
    assert.equal(fed[0]!.stdout_tail, "wrote\n");
    assert.equal(fed[0]!.kept_for_history, undefined);
  },
);
