/**
 * A confined program that is not Deno (an imported stdio MCP server, a
 * skill script's interpreter) gets only what it runs on: the system
 * folders read-only, its own folder, a private `/tmp`. Nothing of Deno's
 * exists in its namespace: not the host's module cache (other principals'
 * npm packages and remote modules), not a `DENO_DIR` naming it. Before
 * issue 23 a non-Deno MCP server got the host cache's `npm` and `remote`
 * folders and `DENO_DIR`, as a Deno process would.
 *
 * Without working bubblewrap the tests are ignored (their names say so).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { mcpServerCommand } from "../../runtime/mcp/imported_process.ts";
import { confinement, NEEDS_CONFINEMENT } from "./_confined.ts";

// The paths come in the environment: paths named in `args` are mounted
// (runtime/confine/installation.ts).
const PROBE =
  `for p in $WATCHED; do if [ -e "$p" ]; then echo "visible $p"; fi; done
echo "DENO_DIR=\${DENO_DIR:-unset}"
echo "uid=$(id -u)"`;

Deno.test({
  name: "a confined MCP server that is not Deno sees nothing of Deno's cache" +
    NEEDS_CONFINEMENT,
  ignore: !confinement.active,
  async fn() {
    const layout = confinement.layout!;
    const dir = await Deno.makeTempDir({ prefix: "confine_probe_" });
    try {
      const watched = [
        join(layout.denoDir, "npm"),
        join(layout.denoDir, "remote"),
        layout.denoDir,
      ];
      const child = mcpServerCommand({
        command: "sh",
        args: ["-c", PROBE],
        env: { WATCHED: [...watched, dir].join(" ") },
        cwd: dir,
      }, layout).spawn();
      await child.stdin.close();
      const out = await child.output();
      const text = new TextDecoder().decode(out.stdout);
      assert.equal(out.success, true, new TextDecoder().decode(out.stderr));
      // Its own folder is there (the probe works); Deno's cache is not.
      assert.deepEqual(
        text.trim().split("\n"),
        [`visible ${dir}`, "DENO_DIR=unset", "uid=65534"],
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
