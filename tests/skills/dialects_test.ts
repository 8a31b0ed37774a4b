/**
 * Agent Skills folders in every dialect, as an operator drops them in: found
 * by the scan (`SKILL.md` and `skill.md`), listed by discovery with their
 * warnings or as Blocked with the reason, `Bash(git:*)` narrowing enforced
 * in the agent loop, and the warnings in the CLI's banner, one line each.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  decodeRequest,
  REQUEST_SCHEMAS,
} from "../../protocol/request_schemas.ts";
import type { SkillDefinition, SkillResult } from "../../protocol/skill.ts";
import { scanSkillDirs } from "../../runtime/registry/scan.ts";
import { buildSnapshot } from "../../runtime/registry/snapshot.ts";
import { encodeResponse } from "../../protocol/responses.ts";
import { createSkillsCapability } from "../../runtime/skills/capability.ts";
import {
  instructionSkillRecord,
  registryCatalog,
  skillLoadWarnings,
} from "../../runtime/skills/catalog.ts";
import { loadSkillFolder } from "../../runtime/skills/skill_md.ts";
import {
  fakeSession,
  type FakeTool,
  fakeTools,
  scriptedProvider,
} from "../support/skill_fakes.ts";

const DIR = fileURLToPath(
  new URL("../fixtures/skills/dialects/", import.meta.url),
);
const TOOL_NAMES = [
  "read_file",
  "find_files",
  "grep",
  "run_command",
  "write_file",
  "http_request",
];

function toolsNamed(
  names: string[],
  run: FakeTool["run"] = () => "ok",
) {
  return fakeTools(Object.fromEntries(names.map((n) => [n, { run }])));
}

async function discoverFixtures() {
  const scan = await scanSkillDirs([{ path: DIR }]);
  const snapshot = buildSnapshot([], { agentSkills: scan.agentSkills });
  const catalog = registryCatalog({ registry: { snapshot }, home: null });
  const cap = createSkillsCapability({
    catalog,
    tools: toolsNamed(TOOL_NAMES),
  });
  const session = fakeSession();
  const resp = encodeResponse(
    "skill/discover/req",
    "d",
    await cap.handlers["skill/discover/req"]!({
      request: decodeRequest(REQUEST_SCHEMAS["skill/discover/req"].parse({
        type: "skill/discover/req",
        id: "d",
      })),
      session,
      signal: session.signal,
    }),
  );
  const skills = resp.skills as SkillDefinition[];
  return {
    scan,
    byName: new Map(skills.map((s) => [s.name, s])),
    records: await catalog.skills(),
  };
}

Deno.test("discovery lists every dialect's folder: loaded with warnings, or Blocked with the reason", async () => {
  const { scan, byName, records } = await discoverFixtures();
  assert.deepEqual(scan.agentSkills.map((d) => d.slice(DIR.length)).sort(), [
    "Tidy_Imports",
    "broken-yaml",
    "csv_digest",
    "git-history",
    "no-description",
    "release-notes",
  ]);
  assert.deepEqual([...byName.keys()].sort(), [
    "Tidy--Imports",
    "broken-yaml",
    "csv_digest",
    "git-history",
    "no-description",
    "release-notes",
  ]);

  const strict = byName.get("release-notes")!;
  assert.equal(strict.status, "Published");
  assert.equal(strict.metadata?.warnings, undefined);
  assert.equal(strict.metadata?.license, "Apache-2.0");

  const a2e = byName.get("csv_digest")!;
  assert.equal(a2e.status, "Published");
  assert.match(a2e.file_path ?? "", /csv_digest\/skill\.md$/);
  assert.deepEqual(a2e.arguments, ["path", "column", "delimiter"]);
  assert.deepEqual(a2e.input_schema.required, ["path"]);
  assert.deepEqual(
    (a2e.metadata?.tool_names as { unknown: string[] }).unknown,
    ["WebSearch"],
  );

  const lenient = byName.get("Tidy--Imports")!;
  assert.equal(lenient.status, "Published");
  assert.deepEqual(lenient.metadata?.warnings, [
    'name "Tidy--Imports" breaks the Agent Skills rule (1-64 lower-case letters, digits and "-", no leading, trailing or double "-"): served as a tool and over A2E, but left out of MCP skills/list',
    'name "Tidy--Imports" does not match its folder "Tidy_Imports"',
  ]);

  const yaml = byName.get("broken-yaml")!;
  assert.equal(yaml.status, "Blocked");
  assert.match(
    String(yaml.metadata?.blocked_reason),
    /broken-yaml\/SKILL.md": YAML error at line 4: Flow sequence/,
  );
  const undescribed = byName.get("no-description")!;
  assert.equal(undescribed.status, "Blocked");
  assert.match(
    String(undescribed.metadata?.blocked_reason),
    /field "description" is required/,
  );

  // The banner's lines: one per warning and per unloadable skill.
  const lines = skillLoadWarnings(records);
  assert.equal(lines.length, 6, lines.join("\n"));
  assert.ok(lines.every((l) => !l.includes("\n")));
  assert.equal(
    lines.filter((l) => l.startsWith('skill "Tidy--Imports" (')).length,
    2,
  );
  assert.ok(
    lines.some((l) =>
      /^skill "csv_digest" \(.*skill\.md\): tool names skillbox does not know grant nothing: "WebSearch"$/
        .test(l)
    ),
  );
  assert.ok(
    lines.some((l) => /^skill "broken-yaml" .* cannot be loaded: /.test(l)),
  );
  // A2E's dialect allows "_"; MCP clients that verify skills do not.
  assert.ok(
    lines.some((l) =>
      /^skill "csv_digest" .*: name "csv_digest" breaks the Agent Skills naming rules .*: served as a tool and over A2E, but left out of MCP skills\/list$/
        .test(l)
    ),
  );
});

Deno.test("Bash(git:*) lets the skill's agent loop run git and nothing else", async () => {
  const skill = await loadSkillFolder(join(DIR, "git-history"));
  assert.deepEqual(skill.tools, ["run_command"]);
  const record = instructionSkillRecord(skill, { source: "project" });
  const tools = toolsNamed(["run_command"], (args) => ({
    exit_code: 0,
    stdout: `ran ${args.command}`,
  }));
  const call = (id: string, command: string, args: string[]) => ({
    tool_calls: [{ id, name: "run_command", arguments: { command, args } }],
  });
  const provider = scriptedProvider([
    call("c1", "git", ["log", "-n", "1"]),
    call("c2", "rm", ["-rf", "/"]),
    call("c3", "/usr/bin/git", ["log"]),
    call("c4", "sh", ["-c", "git log; rm -rf /"]),
    { tokens: ["One commit."] },
  ]);
  const cap = createSkillsCapability({
    catalog: { skills: () => Promise.resolve([record]) },
    tools,
    llm: () => provider,
  });
  const session = fakeSession();
  const resp = encodeResponse(
    "skill/call/req",
    "r",
    await cap.handlers["skill/call/req"]!({
      request: decodeRequest(REQUEST_SCHEMAS["skill/call/req"].parse({
        type: "skill/call/req",
        id: "r",
        name: "git-history",
        arguments: {},
      })),
      session,
      signal: session.signal,
    }),
  );
  const result = resp.data as SkillResult;
  assert.equal(result.success, true, result.error ?? "");
  // Only the git command reached the tool.
  assert.deepEqual(tools.calls, [{
    name: "run_command",
    args: { command: "git", args: ["log", "-n", "1"] },
  }]);
  const failed = result.events.filter((e) => e.kind === "tool.failed");
  assert.equal(failed.length, 3);
  assert.match(
    String(failed[0]!.data.error),
    /^Skill "git-history" cannot run "rm -rf \/": its allowed-tools let run_command run only "git \*"$/,
  );
  assert.ok(failed.every((e) => e.data.error_code === "tool_denied"));
  // The model was told the narrowing in run_command's description.
  const offered = provider.requests[0]!.tools?.find((t) =>
    t.name === "run_command"
  );
  assert.match(
    String(offered?.description),
    /may only run: `git` with any arguments\. Other commands are refused\.$/,
  );
  // The model read the refusal as the tool's answer.
  const fed = provider.requests[2]!.messages.at(-1)!;
  assert.equal(fed.role, "tool");
  assert.match(String(fed.content), /cannot run "rm -rf \/"/);
});

Deno.test("the CLI banner reports each dialect warning on one line", async () => {
  const work = await Deno.makeTempDir();
  try {
    const config = join(work, "skillbox.jsonc");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        skills: [DIR],
        builtin_skills: false,
        sandbox: { cache_dir: null },
        listen: { port: 0 },
      }),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        "--unstable-worker-options",
        "-A",
        fileURLToPath(new URL("../../host.ts", import.meta.url)),
        "--stdio",
        "--config",
        config,
      ],
      cwd: work,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.match(stderr, /6 skills from .*; 6 skill warning\(s\) below/);
    const warnings = stderr.split("\n").filter((l) =>
      l.startsWith("skillbox warning: ")
    );
    assert.equal(warnings.length, 6, stderr);
    assert.ok(
      warnings.some((l) =>
        /^skillbox warning: skill "Tidy--Imports" \(.*\): name "Tidy--Imports" does not match its folder "Tidy_Imports"$/
          .test(l)
      ),
      stderr,
    );
    assert.ok(
      warnings.some((l) =>
        /^skillbox warning: skill "no-description" .* cannot be loaded: .*"description" is required$/
          .test(l)
      ),
      stderr,
    );
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("a skill.md folder that cannot be loaded is Blocked under its own file name", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "half_done"));
    await Deno.writeTextFile(
      join(dir, "half_done", "skill.md"),
      "---\nname: half_done\ntriggers: [x]\n---\nNo description yet.\n",
    );
    const scan = await scanSkillDirs([{ path: dir }]);
    const snapshot = buildSnapshot([], { agentSkills: scan.agentSkills });
    const catalog = registryCatalog({ registry: { snapshot }, home: null });
    const [record] = await catalog.skills();
    assert.equal(record?.run, null);
    assert.equal(
      record?.definition.filePath,
      join(dir, "half_done", "skill.md"),
    );
    assert.match(record?.loadProblem ?? "", /"description" is required/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
