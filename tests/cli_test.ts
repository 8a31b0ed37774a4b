/**
 * The CLI as an operator runs it: flags, config errors, and the full host
 * (sandbox, registry, shipped toolkits and skills) over stdio, driven with
 * raw A2E JSON.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { HOST_FLAGS as FLAGS, HOST_MAIN as HOST } from "./support/host_cli.ts";

async function runCli(args: string[], cwd?: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...FLAGS, HOST, ...args],
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("the CLI rejects a bad flag with one clear line and exit code 2", async () => {
  const { code, stderr, stdout } = await runCli(["--bogus"]);
  assert.equal(code, 2);
  assert.equal(stdout, "");
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0]!, /bogus/);
});

Deno.test("the CLI prints its usage with --help", async () => {
  const { code, stderr } = await runCli(["--help"]);
  assert.equal(code, 0);
  assert.match(stderr, /--skills DIR/);
  assert.match(stderr, /Precedence/);
});

Deno.test("the CLI reports config errors with file, line and column, or the field path", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    await t.step("a JSONC syntax error", async () => {
      const file = join(dir, "syntax.jsonc");
      await Deno.writeTextFile(
        file,
        '{\n  // ok\n  "listen": {\n    "port": }\n}',
      );
      const { code, stderr } = await runCli(["--config", file]);
      assert.equal(code, 1);
      assert.equal(stderr.trim().split("\n").length, 1, stderr);
      assert.match(stderr, new RegExp(`${file}:4:13: `));
    });
    await t.step("a schema error", async () => {
      const file = join(dir, "schema.jsonc");
      await Deno.writeTextFile(
        file,
        '{ "limits": { "max_parallel": "four" } }',
      );
      const { code, stderr } = await runCli(["--config", file]);
      assert.equal(code, 1);
      assert.match(stderr, /limits\.max_parallel/);
    });
    await t.step("a bad llm entry", async () => {
      const file = join(dir, "llm.jsonc");
      await Deno.writeTextFile(
        file,
        '{ "llm": [{ "provider_name": "gpt", "provider_credentials": {} }] }',
      );
      const { code, stderr } = await runCli(["--config", file]);
      assert.equal(code, 1);
      assert.match(stderr, /llm\.0\.provider_name/);
    });
    await t.step("a bad policy", async () => {
      const file = join(dir, "policy.jsonc");
      await Deno.writeTextFile(
        file,
        '{ "policy": { "tools": { "deny": "shell" } } }',
      );
      const { code, stderr } = await runCli(["--config", file]);
      assert.equal(code, 1);
      assert.match(stderr, /policy\.tools\.deny/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

type Msg = Record<string, unknown>;

Deno.test("the CLI serves the shipped toolkits and skills over stdio", async () => {
  const data = await Deno.makeTempDir();
  const work = await Deno.makeTempDir();
  await Deno.writeTextFile(join(data, "notes.txt"), "alpha\nbeta\ngamma\n");
  await Deno.writeTextFile(
    join(data, "people.csv"),
    "name,age\nada,36\nalan,41\ngrace,\n",
  );
  const config = join(work, "skillbox.jsonc");
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      // The operator opens the data folder to sandboxes, and configures the
      // filesystem toolkit on it for every session.
      policy: { permissions: { read: [data] } },
      toolkits: { filesystem: { root: data } },
      sandbox: { cache_dir: join(work, "cache") },
    }),
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...FLAGS, HOST, "--stdio", "--config", config],
    cwd: work,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const send = (msg: Msg) =>
    writer.write(new TextEncoder().encode(JSON.stringify(msg) + "\n"));
  // Reads messages until the final answer to `id`, collecting its events.
  const answer = async (id: string) => {
    const events: Msg[] = [];
    while (true) {
      while (!buffer.includes("\n")) {
        const { done, value } = await reader.read();
        if (done) throw new Error("stdout ended");
        buffer += value;
      }
      const at = buffer.indexOf("\n");
      const msg = JSON.parse(buffer.slice(0, at)) as Msg;
      buffer = buffer.slice(at + 1);
      if (msg.req_id !== id) continue;
      if (String(msg.type).endsWith("/event")) events.push(msg);
      else return { msg, events };
    }
  };
  try {
    await send({
      type: "handshake/req",
      id: "h",
      agent_caps: ["tools", "toolkits", "skill"],
    });
    const hello = (await answer("h")).msg;
    assert.equal(hello.ok, true);
    assert.deepEqual(
      (hello.accepted_caps as { capability: string }[]).map((c) => c.capability)
        .sort(),
      ["skill", "toolkits", "tools"],
    );

    await send({ type: "tool/list/req", id: "l" });
    const names = ((await answer("l")).msg.tools as { name: string }[]).map((
      t,
    ) => t.name);
    for (const name of ["read_file", "grep", "run_command", "http_request"]) {
      assert.ok(names.includes(name), `${name} is listed`);
    }

    await send({
      type: "tool/call/req",
      id: "c",
      tool_name: "read_file",
      arguments: { path: "notes.txt", start_line: 2, end_line: 2 },
      streaming: true,
    });
    const call = (await answer("c")).msg;
    const result = call.data as Msg;
    assert.equal(result.success, true, String(result.error));
    assert.equal((result.data as Msg).content, "beta\n");

    await send({
      type: "skill/call/req",
      id: "s",
      name: "csv_profile",
      arguments: { path: "people.csv" },
    });
    const skill = await answer("s");
    const skillResult = skill.msg.data as Msg;
    assert.equal(skillResult.success, true, String(skillResult.error));
    assert.equal((skillResult.data as Msg).rows, 3);
    assert.equal(skill.events[0]?.kind, "skill.started");
    assert.equal(skill.events.at(-1)?.kind, "skill.completed");
  } finally {
    await writer.close();
    await reader.cancel();
    const status = await child.status;
    const stderr = await new Response(child.stderr).text();
    await Deno.remove(data, { recursive: true });
    await Deno.remove(work, { recursive: true });
    assert.equal(status.code, 0, stderr);
    assert.match(stderr, /\d+ tools, \d+ toolkits, \d+ skills/);
  }
});
