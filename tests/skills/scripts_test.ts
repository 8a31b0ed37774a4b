/**
 * Skill scripts: run confined by bubblewrap (runner-level hostile cases),
 * and end to end through the agent loop against the mock LLM server.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Buffer } from "node:buffer";
import {
  runSkillScript,
  type ScriptCall,
} from "../../runtime/skills/scripts/run_script.ts";
import { DEFAULT_INTERPRETERS } from "../../runtime/skills/scripts/interpreters.ts";
import { startMockOpenAI } from "../support/mock_openai.ts";
import {
  connectA2e,
  type Received,
  startStack,
} from "../support/skills_host.ts";
import type { SkillResult } from "../../protocol/skill.ts";

const FIXTURES = fileURLToPath(
  new URL("../fixtures/skills/scripts/", import.meta.url),
);
const PROBES = join(FIXTURES, "probes");
const limits = { interpreters: DEFAULT_INTERPRETERS };

type Event = { kind: string; data: Record<string, unknown> };

function probe(
  script: string,
  extra: Partial<ScriptCall> = {},
): { call: ScriptCall; events: Event[] } {
  const events: Event[] = [];
  return {
    events,
    call: {
      folder: PROBES,
      script: `scripts/${script}`,
      args: [],
      timeoutMs: 20_000,
      onEvent: (kind, data) => events.push({ kind, data }),
      ...extra,
    },
  };
}

// The pids of host processes whose command line mentions `marker`.
async function processesWith(marker: string): Promise<number[]> {
  const { stdout } = await new Deno.Command("/usr/bin/pgrep", {
    args: ["-f", marker],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(stdout).split("\n").filter(Boolean).map(
    Number,
  );
}

Deno.test("a shell script: args, stdin, stdout/stderr as log events, exit code, artifact", async () => {
  const { call, events } = probe("hello.sh", {
    args: ["world"],
    stdin: "hi there\n",
  });
  const result = await runSkillScript(call, limits);
  assert.equal(result.exit_code, 3);
  assert.equal(result.timed_out, false);
  assert.equal(result.stdout_tail, "hello world\n");
  assert.equal(result.stderr_tail, "to stderr\n");
  const logs = events.filter((e) => e.kind === "log").map((e) => e.data);
  assert.deepEqual(
    logs.map((l) => [l.stream, l.level, l.message]).sort(),
    [["stderr", "warn", "to stderr\n"], ["stdout", "info", "hello world\n"]],
  );
  assert.deepEqual(result.artifacts, [
    { name: "greeting.txt", bytes: 9, sent: true },
  ]);
  const artifact = events.find((e) => e.kind === "artifact")!.data;
  assert.equal(artifact.name, "greeting.txt");
  assert.equal(artifact.final, true);
  assert.equal(
    Buffer.from(String(artifact.chunk), "base64").toString(),
    "hi there\n",
  );
});

Deno.test("a TypeScript script runs in a confined Deno with no permission but the skill (read) and the workspace: same log, artifact and exit-code contract", async () => {
  const { call, events } = probe("deno_probe.ts", {
    args: ["4"],
    files: { "input.txt": "abc" },
  });
  const result = await runSkillScript(call, limits);
  assert.equal(result.exit_code, 4, result.stderr_tail);
  assert.equal(result.stderr_tail, "to stderr\n");
  const [first, report] = result.stdout_tail.trim().split("\n");
  assert.equal(first, "read 3 chars");
  const seen = JSON.parse(report!);
  assert.equal(seen.read_skill, "ok");
  for (const denied of ["write_skill", "read_etc", "env", "run", "net"]) {
    assert.notEqual(seen[denied], "ok", `${denied} is refused`);
  }
  assert.equal(seen.write_skill, "NotCapable");
  assert.equal(seen.env, "NotCapable");
  assert.deepEqual(result.artifacts, [
    { name: "upper.txt", bytes: 3, sent: true },
  ]);
  const artifact = events.find((e) => e.kind === "artifact")!.data;
  assert.equal(Buffer.from(String(artifact.chunk), "base64").toString(), "ABC");
  assert.ok(events.some((e) => e.kind === "log" && e.data.stream === "stderr"));
});

Deno.test("a script that loops forever is killed at the timeout with its whole tree", async () => {
  const marker = `skillbox-forever-${crypto.randomUUID()}`;
  let started!: () => void;
  const running = new Promise<void>((r) => started = r);
  const { call } = probe("forever.sh", {
    args: [marker],
    timeoutMs: 1500,
    onEvent: (kind, data) => {
      if (kind === "log" && String(data.message).includes("started")) {
        started();
      }
    },
  });
  const pending = runSkillScript(call, limits);
  // Bounded by the run itself: it ends at the timeout whether or not it started.
  await Promise.race([running, pending]);
  // Both children run on the host (in the sandbox's pid namespace).
  assert.equal((await processesWith(marker)).length >= 2, true);
  const result = await pending;
  assert.equal(result.timed_out, true);
  assert.equal(result.exit_code, 137);
  assert.match(result.stderr_tail, /timeout/);
  // Nothing is left: the kernel ends the pid namespace with its pid 1. Its
  // teardown is asynchronous, so poll with a bound.
  let left = await processesWith(marker);
  for (let i = 0; i < 50 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
    left = await processesWith(marker);
  }
  assert.deepEqual(left, []);
});

Deno.test("a script cannot read the host's files nor write outside its workspace", async () => {
  const outside = await Deno.makeTempDir();
  const secret = join(outside, "secret.txt");
  await Deno.writeTextFile(secret, "host secret");
  const target = join(outside, "written.txt");
  const { call } = probe("escape.py", { args: [secret, target] });
  const result = await runSkillScript(call, limits);
  assert.equal(result.exit_code, 0, result.stderr_tail);
  const seen = JSON.parse(result.stdout_tail);
  assert.equal(seen.read_host, "FileNotFoundError");
  assert.equal(seen.read_root, "FileNotFoundError");
  assert.equal(seen.read_etc, "FileNotFoundError");
  assert.equal(seen.write_skill, "OSError"); // read-only file system
  assert.equal(seen.write_usr, "OSError");
  assert.equal(seen.write_host, "FileNotFoundError");
  await assert.rejects(Deno.stat(target), Deno.errors.NotFound);
  await assert.rejects(Deno.stat(join(PROBES, "pwned")), Deno.errors.NotFound);
  await Deno.remove(outside, { recursive: true });
});

Deno.test("a script runs as nobody without capabilities, in a read-only root that hides the host, its processes and other runs", async () => {
  // Another run's workspace, as the runner names them on the host.
  const other = await Deno.makeTempDir({ prefix: "skillbox-script-" });
  await Deno.writeTextFile(join(other, "theirs.txt"), "another run's data");
  const project = fileURLToPath(new URL("../../deno.json", import.meta.url));
  const { call, events } = probe("identity.py", {
    args: [project, join(other, "theirs.txt")],
  });
  try {
    const result = await runSkillScript(call, limits);
    assert.equal(result.exit_code, 0, result.stderr_tail);
    const seen = JSON.parse(result.stdout_tail);
    assert.equal(seen.uid, 65534);
    assert.equal(seen.euid, 65534);
    assert.equal(seen.gid, 65534);
    assert.equal(seen.cap_eff, "0000000000000000");
    assert.equal(seen.cap_bnd, "0000000000000000");
    // Its own PID namespace: bwrap's init and the script, none of the host's.
    assert.ok(seen.pids.length <= 3, `sees pids ${seen.pids}`);
    assert.ok(!seen.pids.includes(Deno.pid) || Deno.pid <= 3);
    assert.equal(seen.shadow, "FileNotFoundError");
    assert.deepEqual(seen.host_reads, [
      "FileNotFoundError",
      "FileNotFoundError",
    ]);
    assert.deepEqual(seen.tmp, []);
    assert.equal(seen.write_root, "OSError"); // read-only root
    assert.equal(seen.write_tmp, "ok");
    assert.equal(seen.write_work, "ok");
    assert.equal(seen.cwd, "/work");
    assert.deepEqual(seen.env, ["HOME", "LANG", "PATH", "PWD", "TMPDIR"]);
    assert.ok(
      events.some((e) => e.kind === "artifact" && e.data.name === "ok.txt"),
    );
  } finally {
    await Deno.remove(other, { recursive: true });
  }
});

Deno.test("a script has no network, not even the host's loopback", async () => {
  const server = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let accepted = 0;
  (async () => {
    for await (const conn of server) {
      accepted++;
      conn.close();
    }
  })();
  const { call } = probe("network.py", {
    args: [String(server.addr.port)],
  });
  const result = await runSkillScript(call, limits);
  server.close();
  assert.equal(result.exit_code, 0, result.stderr_tail);
  const seen = JSON.parse(result.stdout_tail);
  assert.equal(seen.loopback, "ConnectionRefusedError");
  assert.equal(seen.internet, "OSError"); // network unreachable
  assert.equal(accepted, 0);
});

Deno.test("a script past the memory cap fails with its real error", async () => {
  const { call } = probe("hog.py");
  const result = await runSkillScript(call, {
    ...limits,
    memoryBytes: 256 * 1024 * 1024,
  });
  assert.notEqual(result.exit_code, 0);
  assert.match(result.stderr_tail, /MemoryError/);
});

Deno.test("a script importing a package the machine lacks fails with the import error", async () => {
  const { call } = probe("missing_pkg.py");
  const result = await runSkillScript(call, limits);
  assert.equal(result.exit_code, 1);
  assert.match(
    result.stderr_tail,
    /ModuleNotFoundError: .*surely_not_installed_pkg_xyz/,
  );
});

Deno.test("an interpreter the policy does not allow, or that is not installed, is refused with a clear message", async () => {
  await assert.rejects(
    runSkillScript(probe("report.rb").call, limits),
    /policy allows no interpreter for "\.rb" files \(allowed: \.js, \.py, \.sh, \.ts\)/,
  );
  await assert.rejects(
    runSkillScript(probe("report.rb").call, {
      interpreters: { ".rb": "ruby-not-installed-here" },
    }),
    /interpreter "ruby-not-installed-here" is not installed/,
  );
  await assert.rejects(
    runSkillScript(probe("hello.sh").call, {
      interpreters: { ".sh": "/tmp/evil" },
    }),
    /must be a program name/,
  );
});

Deno.test("a script is refused when OS confinement is off: never run unconfined", async () => {
  await assert.rejects(
    runSkillScript(probe("hello.sh").call, { ...limits, confinement: "off" }),
    /skill scripts run only under OS confinement \(OS confinement is off/,
  );
});

Deno.test("input files cannot be placed outside the workspace", async () => {
  await assert.rejects(
    runSkillScript(
      probe("hello.sh", { files: { "../../escaped.txt": "x" } }).call,
      limits,
    ),
    /must stay inside the workspace/,
  );
});

Deno.test(
  "end to end: the agent loop runs a skill's Python script on a CSV, with log events, exit code and artifact",
  { sanitizeOps: false, sanitizeResources: false },
  async () => {
    const csv = "region,amount\nnorth,1.5\nsouth,2.5\nnorth,\n";
    const mock = await startMockOpenAI([
      {
        tool_calls: [{
          name: "run_skill_script",
          arguments: {
            script: "scripts/summarize.py",
            args: ["data.csv", "summary.json"],
            files: { "data.csv": csv },
          },
        }],
      },
      { tokens: ["3 rows, amount total 4."] },
    ]);
    const dataDir = await Deno.realPath(await Deno.makeTempDir());
    const stack = await startStack({
      llm: { provider: "openai", url: mock.url },
      dataDir,
      skillDirs: [FIXTURES],
    });
    try {
      const agent = await connectA2e(stack.wsUrl);
      const live: Received[] = [];
      const resp = await agent.request({
        type: "skill/call/req",
        name: "csv-summary",
        arguments: { task: "summarize" },
        streaming: true,
        timeout: 30,
      }, (r) => live.push(r));
      const result = resp.message.data as SkillResult;
      assert.equal(result.success, true, result.error ?? "");
      assert.equal(result.data, "3 rows, amount total 4.");
      // The tool was offered with the skill's scripts as an enum.
      const offered = mock.requests[0]!.body.tools as {
        function: { name: string; parameters: Record<string, unknown> };
      }[];
      const tool = offered.find((t) => t.function.name === "run_skill_script");
      assert.deepEqual(
        (tool!.function.parameters.properties as Record<string, {
          enum?: string[];
        }>).script!.enum,
        ["scripts/summarize.py"],
      );
      const events = result.events;
      const logs = events.filter((e) => e.kind === "log");
      assert.ok(
        logs.some((e) => String(e.data.message).includes("summarized 3 rows")),
      );
      const artifact = events.find((e) => e.kind === "artifact")!;
      assert.equal(artifact.data.name, "summary.json");
      assert.equal(artifact.data.mime, "application/json");
      assert.deepEqual(
        JSON.parse(
          Buffer.from(String(artifact.data.chunk), "base64").toString(),
        ),
        {
          rows: 3,
          columns: ["region", "amount"],
          totals: { amount: 4 },
        },
      );
      // The model got the exit code, the output tail and the artifact list.
      const second = mock.requests[1]!.body.messages as {
        role: string;
        content: string;
      }[];
      const fed = JSON.parse(second.at(-1)!.content);
      assert.equal(fed.exit_code, 0);
      assert.match(fed.stdout_tail, /"rows": 3/);
      assert.deepEqual(fed.artifacts, [
        {
          name: "summary.json",
          bytes: Buffer.from(String(artifact.data.chunk), "base64").length,
          sent: true,
        },
      ]);
      const kinds = events.map((e) => e.kind);
      assert.ok(
        kinds.indexOf("tool.started") < kinds.indexOf("log") &&
          kinds.indexOf("artifact") < kinds.indexOf("tool.completed"),
      );
      // Streamed live too.
      assert.ok(live.some((r) => r.message.kind === "artifact"));
      await agent.close();
    } finally {
      await stack.close();
      await mock.close();
      await Deno.remove(dataDir, { recursive: true });
    }
  },
);
