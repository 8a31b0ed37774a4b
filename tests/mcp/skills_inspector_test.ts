/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector`, fetched with
 * npx) verifies every skill skillbox serves, shipped and operator's:
 * `--method skills/list --verify` checks each entry against SEP-2640 and
 * every file against its digest, and exits 0 only when all are verified.
 * Over stdio (the Inspector spawns `host.ts --mcp`) and over HTTP.
 *
 * Needs npx and npm: skipped with a message when the Inspector cannot be
 * fetched, except under `CI=true`, where it fails.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost } from "../../runtime/host.ts";
import { stdioHostArgs } from "../support/mcp_client.ts";
import { testSandbox } from "../support/mcp_fixtures.ts";
import { skipOutsideCi } from "../support/skip.ts";

const INSPECTOR = "@modelcontextprotocol/inspector@2.12.0";

async function inspector(args: string[]): Promise<Deno.CommandOutput> {
  return await new Deno.Command("npx", {
    args: ["-y", INSPECTOR, "--cli", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
}

const probe = await inspector(["--version"]).catch((e) => ({
  success: false,
  stderr: new TextEncoder().encode(String(e)),
}));
const reachable = probe.success;
const skip = skipOutsideCi(
  "the Inspector CLI tests",
  reachable
    ? null
    : `cannot run npx ${INSPECTOR}: ${
      new TextDecoder().decode(probe.stderr).slice(-300)
    }`,
);

interface Report {
  uri: string;
  outcome: string;
  files: { status: string }[];
}

/** An operator's folder with one skill, a linked guide and a binary file. */
async function operatorSkills(): Promise<string> {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(join(dir, "notes", "reference"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "notes", "SKILL.md"),
    '---\nname: notes\ndescription: Takes notes\nmetadata:\n  version: "2"\n---\n' +
      "Read [the guide](reference/guide.md).\n",
  );
  await Deno.writeTextFile(
    join(dir, "notes", "reference", "guide.md"),
    "Be brief.\n",
  );
  await Deno.writeFile(
    join(dir, "notes", "reference", "logo.png"),
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0xff]),
  );
  return dir;
}

function verified(result: Deno.CommandOutput): Report[] {
  const out = new TextDecoder().decode(result.stdout);
  const err = new TextDecoder().decode(result.stderr);
  assert.ok(
    result.success,
    `The Inspector exited ${result.code}:\n${out}\n${err.slice(-2000)}`,
  );
  const reports = out.split("\n").filter((l) => l.startsWith("{")).map((l) =>
    JSON.parse(l) as Report
  );
  for (const report of reports) {
    assert.equal(report.outcome, "verified", JSON.stringify(report));
    assert.ok(report.files.every((f) => f.status === "verified"));
  }
  // The shipped SKILL.md skill and the operator's.
  assert.deepEqual(reports.map((r) => r.uri), [
    "skill://find-todos/SKILL.md",
    "skill://notes/SKILL.md",
  ]);
  return reports;
}

Deno.test({
  name: "the Inspector CLI verifies every skill over stdio",
  ignore: skip,
  async fn() {
    assert.ok(reachable, `Cannot run npx ${INSPECTOR} under CI`);
    const ops = await operatorSkills();
    const config = join(ops, "..", `${crypto.randomUUID()}.jsonc`);
    await Deno.writeTextFile(
      config,
      JSON.stringify({ skills: [ops], sandbox: { cache_dir: null } }),
    );
    try {
      verified(
        await inspector([
          "--method",
          "skills/list",
          "--verify",
          "--",
          Deno.execPath(),
          ...stdioHostArgs(config),
        ]),
      );
    } finally {
      await Deno.remove(config);
      await Deno.remove(ops, { recursive: true });
    }
  },
});

Deno.test({
  name: "the Inspector CLI verifies every skill over HTTP",
  ignore: skip,
  async fn() {
    assert.ok(reachable, `Cannot run npx ${INSPECTOR} under CI`);
    const ops = await operatorSkills();
    const host = createHost({
      config: {
        skills: [ops],
        sandbox: testSandbox(),
      },
    });
    try {
      await host.ready;
      const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
      verified(
        await inspector([`${url}/mcp`, "--method", "skills/list", "--verify"]),
      );
    } finally {
      await host.close({ timeoutSeconds: 1 });
      await Deno.remove(ops, { recursive: true });
    }
  },
});
