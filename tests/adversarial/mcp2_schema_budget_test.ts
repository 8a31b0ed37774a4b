/**
 * An imported server's tool schemas are converted to parameters on the
 * host's thread. One schema's conversion stops after 10,000 steps (about
 * 100 ms), but a listing may hold 10,000 tools: 8,000 such schemas in the
 * 16 MiB a listing may take held the host's thread for about 14 minutes.
 * The conversion work of one listing is now bounded as a whole, in steps.
 */
import assert from "node:assert/strict";
import { rawServer, withImported } from "../support/raw_mcp_server.ts";

// A schema whose every level refers to the next twice (2^20 nodes in under
// 2 KB): each conversion takes its whole 10,000 steps.
function fanSchema(): Record<string, unknown> {
  const defs: Record<string, unknown> = { d20: { type: "string" } };
  for (let i = 0; i < 20; i++) {
    const next = { $ref: `#/$defs/d${i + 1}` };
    defs[`d${i}`] = { type: "object", properties: { a: next, b: next } };
  }
  return {
    type: "object",
    properties: { x: { $ref: "#/$defs/d0" } },
    $defs: defs,
  };
}

const PLAIN = { type: "object", properties: { text: { type: "string" } } };

async function listed(
  count: number,
  schema: unknown,
): Promise<{ kept: number; log: string[]; description: string }> {
  const tools = Array.from(
    { length: count },
    (_, i) => ({ name: `t${i}`, inputSchema: schema }),
  );
  await using raw = await rawServer({ listings: [tools] });
  const log: string[] = [];
  return await withImported({
    servers: { kit: { ...raw.spec, startTimeoutMs: 60_000 } },
    log: (line) => log.push(line),
  }, async (servers) => {
    await servers.start();
    const definitions = servers.modules()[0]!.module.definitions;
    assert.equal(definitions[0]!.fields.tags?.toString(), "mcp");
    return {
      kept: definitions.filter((d) => d.kind === "tool").length,
      log,
      description: String(definitions[0]!.fields.description),
    };
  });
}

Deno.test("an imported server's listing of costly schemas is cut after 100,000 conversion steps", async (t) => {
  await t.step(
    "of 150 fan-out schemas (10,000 steps each), 10 are kept",
    async () => {
      // Before: as many as converting took under a second, on this machine.
      const { kept, log, description } = await listed(150, fanSchema());
      assert.equal(kept, 10);
      // Before: the other 140 were left out without a word.
      const said =
        /MCP server "kit": 140 tool\(s\) left out: converting their schemas/;
      assert.equal(
        log.filter((line) => said.test(line)).length,
        1,
        log.join("\n"),
      );
      assert.match(description, /140 tool\(s\) left out/);
    },
  );
  await t.step("2,000 plain schemas are all kept", async () => {
    const { kept, log, description } = await listed(2000, PLAIN);
    assert.equal(kept, 2000);
    assert.doesNotMatch(log.join("\n"), /left out/);
    assert.doesNotMatch(description, /left out/);
  });
});
