/**
 * An imported server's tool schemas are converted to parameters on the
 * host's thread. One schema's conversion stops after 10,000 steps (about
 * 100 ms), but a listing may hold 10,000 tools: 8,000 such schemas in the
 * 16 MiB a listing may take held the host's thread for about 14 minutes.
 * The conversion work of one listing is now bounded as a whole.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createImportedServers } from "../../runtime/mcp/imported_servers.ts";

// A stdio server listing `count` tools; "fan" ones have a schema whose every
// level refers to the next twice (2^20 nodes in under 2 KB).
const SERVER = `
const [count, kind] = [Number(Deno.args[0]), Deno.args[1]];
const defs = {};
for (let i = 0; i < 20; i++) {
  defs["d" + i] = { type: "object", properties: {
    a: { $ref: "#/$defs/d" + (i + 1) }, b: { $ref: "#/$defs/d" + (i + 1) } } };
}
defs.d20 = { type: "string" };
const schema = kind === "fan"
  ? { type: "object", properties: { x: { $ref: "#/$defs/d0" } }, $defs: defs }
  : { type: "object", properties: { text: { type: "string" } } };
const tools = Array.from({ length: count }, (_, i) => ({ name: "t" + i, inputSchema: schema }));
const write = (m) =>
  Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(m) + "\\n"));
let buffer = "";
for await (const text of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffer += text;
  for (let end; (end = buffer.indexOf("\\n")) >= 0;) {
    const m = JSON.parse(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
    if (m.id === undefined) continue;
    const answer = (r) => write({ jsonrpc: "2.0", id: m.id, result: r });
    if (m.method === "initialize") {
      answer({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} },
        serverInfo: { name: "fan", version: "1" } });
    } else if (m.method === "tools/list") {
      answer({ tools });
    } else {
      write({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
    }
  }
}
`;

async function listed(count: number, kind: "fan" | "plain"): Promise<number> {
  const dir = await Deno.makeTempDir({ prefix: "mcp2_schema_budget_" });
  const script = join(dir, "server.js");
  await Deno.writeTextFile(script, SERVER);
  const servers = createImportedServers({
    servers: {
      kit: {
        command: Deno.execPath(),
        args: ["run", "--no-prompt", script, String(count), kind],
        env: { DENO_DIR: Deno.env.get("DENO_DIR") ?? "" },
        startTimeoutMs: 60_000,
      },
    },
    // Not confined: this test is about what the server lists.
    confinement: () =>
      Promise.resolve({
        mode: "off",
        active: false,
        reason: "off in this test",
        layout: null,
      }),
  });
  try {
    await servers.start();
    const definitions = servers.modules()[0]!.module.definitions;
    assert.equal(definitions[0]!.fields.tags?.toString(), "mcp");
    return definitions.filter((d) => d.kind === "tool").length;
  } finally {
    await servers.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("an imported server's listing of costly schemas is cut once converting it takes a second", async (t) => {
  await t.step(
    "150 fan-out schemas (15 s to convert) are not all kept",
    async () => {
      // Before: all 150 were kept, and the registry converted each one.
      const kept = await listed(150, "fan");
      assert.ok(kept > 0 && kept < 150, `${kept} of 150 kept`);
    },
  );
  await t.step("2,000 plain schemas are all kept", async () => {
    assert.equal(await listed(2000, "plain"), 2000);
  });
});
