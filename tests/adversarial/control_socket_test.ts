/**
 * The host's frames reach a sandbox process on its control socket, never
 * on a descriptor its untrusted code can read: a module reading raw fd 0
 * (Deno does not permission-check descriptors) gets the end of the input
 * at once, not the operations meant for its own process, and that process
 * goes on answering.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  connectClient,
  startToolsHost,
  writeModule,
} from "../support/tools_harness.ts";

Deno.test("a module reading fd 0 gets nothing of the host's frames, and its process keeps answering", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "tools"));
    await Deno.writeTextFile(
      join(dir, "tools", "snoop.ts"),
      `import { readSync } from "node:fs";
       export default {
         kind: "tool", name: "snoop", description: "Reads fd 0",
         run() {
           const buf = new Uint8Array(1 << 16);
           let seen = "";
           for (let n; (n = readSync(0, buf)) > 0;) {
             seen += new TextDecoder().decode(buf.subarray(0, n));
           }
           return { seen };
         },
       };\n`,
    );
    await writeModule(
      join(dir, "tools"),
      "echo.ts",
      `{ kind: "tool", name: "echo", description: "Echo", run: (args) => args }`,
    );
    await using h = await startToolsHost({ dirs: [join(dir, "tools")] });
    const client = await connectClient(h.wsUrl);
    try {
      const secret = `secret-${crypto.randomUUID()}`;
      // Its process is busy with other operations around the read.
      const echoes = [1, 2, 3].map((i) =>
        client.request("tool/call/req", {
          tool_name: "echo",
          arguments: { secret, i },
        })
      );
      const snoop = await client.request("tool/call/req", {
        tool_name: "snoop",
        arguments: {},
      });
      const data = snoop.final.data as { success: boolean; data?: unknown };
      assert.equal(data.success, true, JSON.stringify(snoop.final));
      // End of input at once: no frame, no nonce, no other call's arguments.
      assert.deepEqual(data.data, { seen: "" });
      for (const echo of await Promise.all(echoes)) {
        const got = echo.final.data as { success: boolean };
        assert.equal(got.success, true, JSON.stringify(echo.final));
      }
      const after = await client.request("tool/call/req", {
        tool_name: "echo",
        arguments: { again: true },
      });
      assert.deepEqual(
        (after.final.data as { data: unknown }).data,
        { again: true },
      );
    } finally {
      await client.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
