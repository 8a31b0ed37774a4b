/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * its whole active server suite) against a real host's `/mcp`, serving the
 * suite's fixture tools and prompts (`tests/fixtures/conformance`). The
 * scenarios that do not apply to skillbox are listed, with why, in
 * `mcp_baseline.yaml`: the suite fails the run on an unexpected failure and
 * on a listed scenario that passes (a stale baseline).
 *
 * Needs npm (the suite is fetched by Deno): skipped with a message when npm
 * cannot be reached, except under `CI=true`, where it fails.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createHost } from "../../runtime/host.ts";
import { testSandbox } from "../support/mcp_fixtures.ts";
import { skipOutsideCi } from "../support/skip.ts";

const SUITE = "npm:@modelcontextprotocol/conformance@0.1.16";
const FIXTURES = fileURLToPath(
  new URL("../fixtures/conformance", import.meta.url),
);
const BASELINE = fileURLToPath(new URL("mcp_baseline.yaml", import.meta.url));

async function run(args: string[]): Promise<Deno.CommandOutput> {
  return await new Deno.Command(Deno.execPath(), {
    // --no-lock: the suite's packages stay out of the project's lock file.
    args: ["run", "--no-lock", "-A", SUITE, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
}

// Fetching the suite once tells whether npm can be reached.
const listed = await run(["list"]).catch((e) => ({
  success: false,
  stderr: new TextEncoder().encode(String(e)),
}));
const reachable = listed.success;
const skip = skipOutsideCi(
  "the MCP conformance suite",
  reachable
    ? null
    : `cannot fetch ${SUITE}: ${
      new TextDecoder().decode(listed.stderr).slice(-300)
    }`,
);

Deno.test({
  name:
    "the MCP conformance suite passes against /mcp, but for the baseline's scenarios",
  ignore: skip,
  async fn() {
    assert.ok(reachable, `Cannot fetch ${SUITE} under CI`);
    const out = await Deno.makeTempDir();
    const host = createHost({
      config: {
        skills: [FIXTURES],
        builtinSkills: false,
        sandbox: testSandbox(),
      },
    });
    try {
      await host.ready;
      const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
      const result = await run([
        "server",
        "--url",
        `${url}/mcp`,
        "--expected-failures",
        BASELINE,
        "-o",
        out,
      ]);
      const text = new TextDecoder().decode(result.stdout) +
        new TextDecoder().decode(result.stderr);
      const summary = text.slice(text.indexOf("=== SUMMARY ==="));
      assert.ok(result.success, `The suite failed:\n${summary}`);
      assert.match(summary, /dns-rebinding-protection: 2 passed, 0 failed/);
      assert.match(summary, /tools-call-with-progress: 1 passed/);
      // The fixtures' artifacts reach the suite as typed content.
      for (
        const id of [
          "tools-call-image",
          "tools-call-audio",
          "tools-call-embedded-resource",
          "tools-call-mixed-content",
        ]
      ) {
        assert.match(summary, new RegExp(`${id}: \\d+ passed, 0 failed`));
      }
    } finally {
      await host.close({ timeoutSeconds: 1 });
      await Deno.remove(out, { recursive: true });
    }
  },
});
