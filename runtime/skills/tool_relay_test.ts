import assert from "node:assert/strict";
import type { SessionScope } from "../capability.ts";
import { SkillEventLog } from "./events.ts";
import type { SkillToolCallOptions, SkillToolHost } from "./run_types.ts";
import { createToolRelay, type ToolRelayOptions } from "./tool_relay.ts";

const session: SessionScope = {
  id: "s",
  token: "",
  state: new Map(),
  send() {},
  signal: new AbortController().signal,
};

function host(
  calls: { name: string; options: SkillToolCallOptions }[],
): SkillToolHost {
  return {
    tool: () => undefined,
    toolkit: () => undefined,
    call: (name, args, options) => {
      calls.push({ name, options });
      options.onEvent?.("progress", { pct: 50 });
      options.onEvent?.("tool.completed", { forged: true });
      if (name === "bad") {
        return Promise.resolve({
          ok: false,
          code: "tool_error",
          message: "It broke",
        });
      }
      return Promise.resolve({ ok: true, value: { echo: args } });
    },
  };
}

function relay(fields: Partial<ToolRelayOptions> = {}) {
  const log = new SkillEventLog("r1");
  const calls: { name: string; options: SkillToolCallOptions }[] = [];
  const call = createToolRelay({
    skill: "sk",
    allowed: new Set(["echo", "bad"]),
    files: null,
    tools: host(calls),
    session,
    log,
    signal: new AbortController().signal,
    remainingMs: () => 1234,
    ...fields,
  });
  return { call, log, calls };
}

Deno.test("createToolRelay() runs a declared tool with the time left and relays its progress only", async () => {
  const { call, log, calls } = relay();
  const value = await call("echo", { a: 1 }, "to check");
  assert.deepEqual(value, { echo: { a: 1 } });
  assert.equal(calls[0]?.options.timeoutMs, 1234);
  assert.deepEqual(log.events.map((e) => e.kind), [
    "tool.started",
    "progress",
    "tool.completed",
  ]);
  assert.equal(log.events[0]?.data.intention, "to check");
  assert.deepEqual(log.events[1]?.data, { pct: 50, tool: "echo" });
});

Deno.test("createToolRelay() turns a failed tool into tool.failed and a thrown error with its code", async () => {
  const { call, log } = relay();
  await assert.rejects(
    call("bad", {}, null),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, "tool_error");
      assert.equal(error.message, "It broke");
      return true;
    },
  );
  assert.equal(log.events.at(-1)?.kind, "tool.failed");
  assert.equal(log.events.at(-1)?.data.error_code, "tool_error");
});

Deno.test("createToolRelay() refuses an undeclared tool before the host sees it", async () => {
  const { call, log, calls } = relay();
  await assert.rejects(call("rm_rf", {}, null), /cannot call tool "rm_rf"/);
  assert.equal(calls.length, 0);
  assert.deepEqual(log.events.map((e) => e.kind), ["tool.failed"]);
  assert.equal(log.events[0]?.data.error_code, "tool_denied");
});

Deno.test("createToolRelay() offers read_skill_file only to a skill with linked files, and only those", async () => {
  const folder = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${folder}/ref.md`, "the reference");
    await Deno.writeTextFile(`${folder}/secret.txt`, "not linked");
    const withFiles = relay({ files: { folder, resources: ["ref.md"] } });
    assert.equal(
      await withFiles.call("read_skill_file", { path: "ref.md" }, null),
      "the reference",
    );
    await assert.rejects(
      withFiles.call("read_skill_file", { path: "secret.txt" }, null),
    );
    await assert.rejects(
      withFiles.call("read_skill_file", { path: "../../etc/passwd" }, null),
    );
    assert.equal(withFiles.calls.length, 0, "never reaches the tool host");
    const without = relay();
    await assert.rejects(
      without.call("read_skill_file", { path: "ref.md" }, null),
      /cannot call tool "read_skill_file"/,
    );
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("createToolRelay() stops at once when the skill's signal aborted", async () => {
  const controller = new AbortController();
  const { call, calls } = relay({ signal: controller.signal });
  controller.abort(new Error("cancelled"));
  await assert.rejects(call("echo", {}, null), /cancelled/);
  assert.equal(calls.length, 0);
});

Deno.test("createToolRelay() holds run_command to the skill's command rules", async () => {
  const { call, log, calls } = relay({
    allowed: new Set(["run_command"]),
    commandRules: [{ words: ["git"], prefix: true }],
  });
  await call("run_command", { command: "git", args: ["status"] }, null);
  assert.equal(calls.length, 1);
  await assert.rejects(
    call("run_command", { command: "rm", args: ["-rf", "x"] }, null),
    /Skill "sk" cannot run "rm -rf x"/,
  );
  assert.equal(calls.length, 1, "the refused command never reaches the host");
  assert.equal(log.events.at(-1)?.data.error_code, "tool_denied");
});

Deno.test("createToolRelay() reads a fetched skill's files through it, never runs its scripts, and rethrows a refused file", async () => {
  const { SkillFileRefusedError } = await import("./skill_links.ts");
  const asked: string[] = [];
  const { call, log } = relay({
    scripts: { interpreters: { ".sh": "sh" } },
    files: {
      folder: "",
      resources: ["guide.md", "scripts/run.sh", "forged.md"],
      fetched: {
        resources: ["guide.md", "scripts/run.sh", "forged.md"],
        note: "Fetched.",
        read: (path) => {
          asked.push(path);
          return path === "forged.md"
            ? Promise.reject(new SkillFileRefusedError("It is forged"))
            : Promise.resolve(`text of ${path}`);
        },
      },
    },
  });
  assert.equal(
    await call("read_skill_file", { path: "guide.md" }, null),
    "text of guide.md",
  );
  await assert.rejects(
    call("run_skill_script", { script: "scripts/run.sh" }, null),
    /the scripts of a skill served by an MCP server are not run by this host/,
  );
  await assert.rejects(
    call("read_skill_file", { path: "forged.md" }, null),
    (e) => e instanceof SkillFileRefusedError && /It is forged/.test(e.message),
  );
  assert.deepEqual(asked, ["guide.md", "forged.md"]);
  assert.deepEqual(
    log.events.map((e) => e.kind),
    [
      "tool.started",
      "tool.completed",
      "tool.failed",
      "tool.started",
      "tool.failed",
    ],
  );
});
