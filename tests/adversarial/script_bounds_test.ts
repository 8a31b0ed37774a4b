/**
 * A skill script against the host's memory and disk (issue 22, item 4): a
 * real host built from a `skillbox.jsonc`, a skill folder whose script
 * floods its workspace every way we know (a 2 GB `dd`, 3,000 sparse 1 MiB
 * files, 20,000 tiny files, links to host files, one sparse 1 TiB file),
 * and another session whose ordinary script runs meanwhile. The workspace
 * is a tmpfs of `sandbox.script_workspace_mb` inside the script's
 * namespace, so the host's disk is never written; what the host collects
 * from it is bounded by `store.script_files_max_bytes` /
 * `store.script_files_max` while it reads.
 *
 * The host runs in its own process, with a `TMPDIR` of its own. Memory is
 * that process's peak RSS (`VmHWM`, reset through its `clear_refs` before
 * each case); disk is the size of the folder the host makes its
 * workspaces in (its `TMPDIR`), sampled by the
 * script's own parking: it waits for a file the test writes into the
 * skill's (read-only) folder, so the test measures while the workspace is
 * at its fullest.
 */

import assert from "node:assert/strict";
import { startHostProcess } from "./_host_process.ts";
import { startMockOpenAI } from "../support/mock_openai.ts";
import { connectA2e } from "../support/skills_host.ts";
import { detectConfinement } from "../../runtime/confine/confine.ts";
import type { SkillResult } from "../../protocol/skill.ts";

const FLOOD_PY = `
import os, sys, time
case = sys.argv[1]
def park():
    # The test measures the host while the workspace is full.
    print("parked", flush=True)
    while not os.path.exists("/skill/go-" + case):
        time.sleep(0.02)
if case == "dd":
    import subprocess
    r = subprocess.run(["dd", "if=/dev/zero", "of=big", "bs=1M", "count=2048"],
                       capture_output=True, text=True)
    print("dd exit", r.returncode, r.stderr.strip().replace("\\n", " | "), flush=True)
    park()
elif case == "sparse":
    n = 0
    try:
        for n in range(3000):
            with open(f"f{n:04}", "wb") as f:
                f.truncate(1 << 20)
        n = 3000
    except OSError as e:
        print("sparse stopped:", e)
    print("made", n)
elif case == "small":
    n = 0
    try:
        while n < 20000:
            with open(f"s{n:05}", "w") as f:
                f.write("x")
            n += 1
    except OSError as e:
        print("small stopped:", e)
    print("made", n)
elif case == "links":
    os.symlink("/etc/passwd", "passwd")
    os.symlink(sys.argv[2], "secret")
    os.symlink("/", "root")
    os.makedirs("d")
    os.symlink(sys.argv[2], "d/secret2")
    with open("ok.txt", "w") as f:
        f.write("fine")
    print("linked")
elif case == "huge":
    with open("huge", "wb") as f:
        f.truncate(1 << 40)
    with open("ok.txt", "w") as f:
        f.write("fine")
    print("huge done")
elif case == "hello":
    with open("out.txt", "w") as f:
        f.write("hi")
    print("hello")
`;

interface Seen {
  result: Record<string, unknown>;
  raw: string;
}

const MIB = 1024 * 1024;

// Resets the peak RSS of process `pid` (Deno's permissions keep /proc's
// files out of the test's reach; a child writes it).
async function peakReset(pid: number): Promise<number> {
  const clear = `/proc/${pid}/clear_refs`;
  const done = await new Deno.Command("sh", {
    args: ["-c", `echo 5 > ${clear}`],
  }).output();
  assert.ok(done.success, new TextDecoder().decode(done.stderr));
  return statusKb(pid, "VmRSS") * 1024;
}

function statusKb(pid: number, field: string): number {
  const status = new TextDecoder().decode(
    new Deno.Command("cat", { args: [`/proc/${pid}/status`] })
      .outputSync().stdout,
  );
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)![1]);
}

async function diskBytes(dir: string): Promise<number> {
  const out = await new Deno.Command("du", { args: ["-sb", dir] }).output();
  return Number(new TextDecoder().decode(out.stdout).split("\t")[0]);
}

const { layout } = await detectConfinement("auto");

Deno.test({
  name:
    "a skill script cannot fill the host's disk or memory through its workspace: the quota is the kernel's, what is collected is bounded while read, other sessions unharmed",
  ignore: layout === null,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const root = await Deno.makeTempDir({ prefix: "skillbox-bounds-" });
    const skills = `${root}/skills`;
    const folder = `${skills}/flood`;
    const tmp = `${root}/tmp`;
    const secretFile = `${root}/host-secret.txt`;
    await Deno.mkdir(`${folder}/scripts`, { recursive: true });
    await Deno.mkdir(tmp);
    await Deno.writeTextFile(secretFile, "HOST-SECRET-CONTENT");
    await Deno.writeTextFile(
      `${folder}/SKILL.md`,
      "---\nname: flood\ndescription: Floods its workspace (tests only).\n---\n\nRun the case.\n",
    );
    await Deno.writeTextFile(`${folder}/scripts/flood.py`, FLOOD_PY);
    const seen = new Map<string, Seen>();
    const args: Record<string, string[]> = { links: [secretFile] };
    // Each skill call's task names its case; the mock answers by case, so
    // concurrent sessions get their own turns.
    const mock = await startMockOpenAI((request) => {
      const messages = request.body.messages as {
        role: string;
        content: string;
      }[];
      const task = messages.find((m) => m.role === "user")!.content;
      const which = /case:(\w+)/.exec(task)![1]!;
      const last = messages.at(-1)!;
      if (last.role === "tool") {
        let result: Record<string, unknown> = {};
        try {
          result = JSON.parse(last.content);
        } catch { /* truncated: checked below */ }
        seen.set(which, { result, raw: last.content });
        return { tokens: ["done"] };
      }
      return {
        tool_calls: [{
          name: "run_skill_script",
          arguments: {
            script: "scripts/flood.py",
            args: [which, ...(args[which] ?? [])],
          },
        }],
      };
    });
    // Its own process: the test process's peak RSS and TMPDIR are shared
    // with the test modules `deno test --parallel` runs beside this one.
    const host = await startHostProcess({
      skills: [skills],
      sandbox: { script_workspace_mb: 64 },
      store: null,
      llm: [{
        provider_name: "openai",
        provider_credentials: { api_key: "test-key" },
        provider_config: { base_url: mock.url, model: "mock-model" },
        is_default: true,
      }],
    }, { env: { TMPDIR: tmp } });
    const figures: string[] = [];
    try {
      const ws = host.url.replace("http", "ws") + "/a2e";
      const agent = await connectA2e(ws);
      const other = await connectA2e(ws);
      const call = async (
        socket: typeof agent,
        which: string,
        onParked?: () => Promise<void>,
      ) => {
        let parked = false;
        const resp = await socket.request({
          type: "skill/call/req",
          name: "flood",
          arguments: { task: `case:${which}` },
          timeout: 120,
        }, (event) => {
          if (parked || !onParked) return;
          if (JSON.stringify(event.message).includes("parked")) {
            parked = true;
            onParked();
          }
        });
        const result = resp.message.data as SkillResult;
        assert.equal(result.success, true, result.error ?? "");
        const got = seen.get(which);
        assert.ok(got, `no tool result for "${which}"`);
        return got;
      };
      const tmpBefore = await diskBytes(tmp);

      // 1. A 2 GB dd: ENOSPC at the quota, the host's disk untouched; the
      // other session's script runs meanwhile.
      let tmpPeak = 0;
      let otherResult: Seen | undefined;
      let rss = await peakReset(host.pid);
      const dd = await call(agent, "dd", async () => {
        tmpPeak = await diskBytes(tmp);
        otherResult = await call(other, "hello");
        await Deno.writeTextFile(`${folder}/go-dd`, "");
      });
      const ddGrowth = statusKb(host.pid, "VmHWM") * 1024 - rss;
      figures.push(
        `dd: host disk under TMPDIR ${tmpBefore} -> ${tmpPeak} bytes, peak RSS +${
          (ddGrowth / MIB).toFixed(1)
        } MiB`,
      );
      assert.match(String(dd.result.stdout_tail), /dd exit 1/, dd.raw);
      assert.match(String(dd.result.stdout_tail), /No space left on device/);
      assert.match(String(dd.result.workspace_note), /64 MiB/, dd.raw);
      assert.ok(
        tmpPeak - tmpBefore < MIB,
        `the host's disk grew by ${tmpPeak - tmpBefore} bytes`,
      );
      assert.ok(otherResult, "the other session's call did not finish");
      assert.equal(otherResult.result.exit_code, 0, otherResult.raw);
      assert.deepEqual(otherResult.result.artifacts, [
        { name: "out.txt", bytes: 2, sent: true },
      ]);

      // 2. 3,000 sparse 1 MiB files: at most the caps collected, noted.
      rss = await peakReset(host.pid);
      const sparse = await call(agent, "sparse");
      const sparseGrowth = statusKb(host.pid, "VmHWM") * 1024 - rss;
      figures.push(`sparse: peak RSS +${(sparseGrowth / MIB).toFixed(1)} MiB`);
      assert.match(String(sparse.result.stdout_tail), /made 3000/, sparse.raw);
      const listed = sparse.result.artifacts as {
        bytes: number;
        sent: boolean;
      }[];
      const sent = listed.filter((a) => a.sent);
      assert.ok(listed.length <= 100, `${listed.length} files listed`);
      assert.ok(
        sent.reduce((n, a) => n + a.bytes, 0) <= 4 * MIB,
        "over 4 MiB collected",
      );
      assert.match(
        String(sparse.result.files_note),
        /^Script files over 4194304 bytes and 100 files: 2,996 of 3,000 files left out/,
      );
      assert.ok(
        sparseGrowth < 128 * MIB,
        `host peak RSS grew by ${(sparseGrowth / MIB).toFixed(0)} MiB`,
      );

      // 3. Many tiny files: the workspace's file count is the kernel's too.
      rss = await peakReset(host.pid);
      const small = await call(agent, "small");
      const smallGrowth = statusKb(host.pid, "VmHWM") * 1024 - rss;
      figures.push(`small: peak RSS +${(smallGrowth / MIB).toFixed(1)} MiB`);
      assert.match(
        String(small.result.stdout_tail),
        /small stopped: \[Errno 28\] No space left on device/,
        small.raw,
      );
      assert.match(String(small.result.workspace_note), /10000 files/);
      assert.ok((small.result.artifacts as unknown[]).length <= 100);
      assert.match(String(small.result.files_note), /files left out/);

      // 4. Links to host files are never followed.
      const links = await call(agent, "links");
      assert.doesNotMatch(links.raw, /HOST-SECRET-CONTENT|root:x:0/);
      assert.deepEqual(links.result.artifacts, [
        { name: "ok.txt", bytes: 4, sent: true },
      ]);

      // 5. One sparse 1 TiB file: listed, never read.
      rss = await peakReset(host.pid);
      const huge = await call(agent, "huge");
      const hugeGrowth = statusKb(host.pid, "VmHWM") * 1024 - rss;
      figures.push(`huge: peak RSS +${(hugeGrowth / MIB).toFixed(1)} MiB`);
      assert.deepEqual(huge.result.artifacts, [
        { name: "huge", bytes: 2 ** 40, sent: false },
        { name: "ok.txt", bytes: 4, sent: true },
      ], huge.raw);
      assert.ok(hugeGrowth < 32 * MIB);

      // The host still serves an ordinary script afterwards.
      seen.delete("hello");
      const after = await call(other, "hello");
      assert.equal(after.result.exit_code, 0, after.raw);
      assert.ok((await diskBytes(tmp)) - tmpBefore < MIB);
      await agent.close();
      await other.close();
    } finally {
      // The figures for the report (issue 22's closing note).
      // deno-lint-ignore no-console
      console.log(figures.join("\n"));
      await host[Symbol.asyncDispose]();
      await mock.close();
      await Deno.remove(root, { recursive: true });
    }
  },
});
