/**
 * `code_api` follows imported MCP servers: a server's tools are declared
 * with the types of their schemas as `<server>__<tool>`, and a tool the
 * server adds later appears in the next answer.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createHost } from "../../runtime/host.ts";
import { defaultConfig } from "../../runtime/config.ts";
import { connect } from "../../client/mod.ts";
import { compile, type Declared } from "./_code_api_host.ts";
import { within } from "../mcp/_host.ts";

const SERVER = fileURLToPath(new URL("./_calc_server.ts", import.meta.url));
// The server's working folder: confined, the only host folder it sees.
const REPO = fileURLToPath(new URL("../../", import.meta.url));

Deno.test("code_api declares an imported server's tools, and the ones it adds", async () => {
  const skills = await Deno.makeTempDir();
  const base = defaultConfig();
  const host = createHost({
    config: {
      skills: [skills],
      builtinSkills: true,
      sandbox: { ...base.sandbox, cacheDir: null },
      mcpServers: {
        calc: {
          command: Deno.execPath(),
          args: ["run", "-A", SERVER],
          env: { DENO_DIR: Deno.env.get("DENO_DIR") ?? "" },
          cwd: REPO,
        },
      },
    },
  });
  try {
    await host.ready;
    // Imported servers start in the background: wait for calc to be up.
    await host.mcpServers.ready;
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const client = await connect(url.replace("http", "ws") + "/a2e");
    try {
      const declare = async () =>
        (await client.tools.call("code_api", {})).data as Declared;
      const first = await declare();
      assert.ok(first.tools.includes("calc__add"), first.tools.join());
      assert.ok(!first.tools.includes("calc__grown"));
      assert.match(
        first.declarations,
        /calc__add: \(args: \{\n\s+a: number;\n\s+b: number;\n\s+\}\) => Promise<\{\n\s+sum: number;\n\s+\}>;/,
      );

      const changed = new Promise<void>((resolve) => {
        client.onPush((m) => {
          if (m.kind === "tools.changed") resolve();
        });
      });
      const grew = await client.tools.call("calc__grow", {});
      assert.equal(grew.success, true, grew.error ?? "");
      await within(changed, 20_000, "the registry takes the server's new tool");
      const after = await declare();
      assert.ok(after.tools.includes("calc__grown"), after.tools.join());

      const errors = await compile(after.declarations, {
        good:
          `const s: number = (await tools.calc__add({ a: 1, b: 2 })).sum;\nawait tools.calc__grown({ size: 3 });\nconsole.log(s);`,
        bad: `await tools.calc__add({ a: "1", b: 2 });`,
        injected: `const one: 1 = fromServer;`,
      });
      assert.equal(errors.good, "", errors.good);
      assert.notEqual(errors.bad, "");
      assert.match(errors.injected ?? "", /Cannot find name 'fromServer'/);
    } finally {
      await client.close();
    }
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(skills, { recursive: true });
  }
});
