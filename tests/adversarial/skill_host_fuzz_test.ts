// A real host (its own process) over hostile Agent Skills folders beside a
// good toolkit and a good skill: it starts, serves the good ones, answers
// skills/list and skills/get for every listed skill without -32603, and
// never prints a crash.

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { crashLines, mcpOpen } from "../support/fuzz_drive.ts";
import { startHostProcess } from "./_host_process.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures/fuzz/", import.meta.url));

const HOSTILE: Record<string, string> = {
  "bomb": "---\nname: bomb\ndescription: d\na: &a [x,x,x,x,x,x,x,x,x]\n" +
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
    "metadata: {d: [*c,*c,*c,*c,*c,*c,*c,*c,*c]}\n---\nbody\n",
  "list": "---\n- a\n- b\n---\nbody\n",
  "scalar": "---\n42\n---\nbody\n",
  "open": "---\nname: open\ndescription: d\nbody\n",
  "bom": "\ufeff---\r\nname: bom\r\ndescription: d\r\n---\r\nbody\r\n",
  "types": "---\nname: 42\ndescription: [1]\nversion: {}\nmax_turns: x\n" +
    "timeout_seconds: [1]\nllm: 3\ninput: 1\noutput: x\nenv: 1\nnet: {}\n" +
    "allowed-tools: 1\nmetadata: [1]\n---\nbody\n",
  "__proto__": "---\nname: __proto__\ndescription: d\n---\nbody\n",
  "dupe": "---\nname: dupe\nname: dupe2\ndescription: d\n---\nbody\n",
  "ünï\u202e": "---\nname: ünï\u202e\ndescription: d\n---\nbody\n",
};

async function post(url: string, session: string, body: unknown) {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": session,
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

Deno.test("a host over hostile skill folders starts and serves the good ones", async () => {
  const skills = await Deno.makeTempDir({ prefix: "skillfuzz-" });
  const cp = await new Deno.Command("cp", {
    args: ["-r", `${FIXTURES}/.`, skills],
  }).output();
  assert.ok(cp.success);
  for (const [folder, text] of Object.entries(HOSTILE)) {
    await Deno.mkdir(`${skills}/${folder}`);
    await Deno.writeTextFile(`${skills}/${folder}/SKILL.md`, text);
  }
  try {
    await using host = await startHostProcess({ skills: [skills] });
    const url = `${host.url}/mcp`;
    const session = await mcpOpen(url);
    const list = await post(url, session, {
      jsonrpc: "2.0",
      id: 1,
      method: "skills/list",
      params: {},
    });
    assert.equal(list.status, 200, list.text);
    assert.doesNotMatch(list.text, /-32603/);
    assert.match(list.text, /notes/);
    const tools = await post(url, session, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/list",
      params: {},
    });
    assert.match(tools.text, /echo/);
    for (const name of ["notes", ...Object.keys(HOSTILE)]) {
      const got = await post(url, session, {
        jsonrpc: "2.0",
        id: 3,
        method: "skills/get",
        params: { uri: `skill://${encodeURIComponent(name)}/SKILL.md` },
      });
      assert.equal(got.status, 200, `${name}: ${got.text}`);
      assert.doesNotMatch(got.text, /-32603/, `${name}: ${got.text}`);
      // A byte-order mark and CRLF lines are a skill as any other.
      if (name === "notes" || name === "bom") {
        assert.match(got.text, /"result"/, `${name}: ${got.text}`);
      }
    }
    assert.deepEqual(crashLines(host.lines), []);
    // Each refused folder is named in a warning with its reason.
    for (const name of ["bomb", "list", "scalar", "open", "types", "dupe"]) {
      assert.ok(
        host.lines.some((l) =>
          l.includes(`skill "${name}"`) && /cannot be loaded: .+/.test(l)
        ),
        name,
      );
    }
  } finally {
    await Deno.remove(skills, { recursive: true });
  }
});
