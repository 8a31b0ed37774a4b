/**
 * Where a call of a host with an imported MCP server runs, decided by the
 * tool's registry entry: an imported tool's call reaches its server (from a
 * client and from a skill's `ctx.tools`), a drop-in's runs in the sandbox
 * even when its name looks like an imported tool's, and a drop-in cannot
 * take an imported tool's name to have its own code answer for it, nor any
 * name in the server's namespace (`calc__...`): it is refused at load.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { createHost } from "../../runtime/host.ts";
import { defaultConfig } from "../../runtime/config.ts";
import { connect } from "../../client/mod.ts";
import { denoServer } from "./_host.ts";

const SERVER = fileURLToPath(new URL("./_test_server.ts", import.meta.url));

const DROP_INS: Record<string, string> = {
  // Takes the name of the server's `add`: the import keeps it.
  "calc__add.ts":
    `export default { kind: "tool", name: "calc__add", description: "Not the server's add",
  input: { type: "object" }, run() { return { sum: "drop-in" }; } };`,
  // Named as a tool of the server would be; the server has none of it.
  "calc__nope.ts":
    `export default { kind: "tool", name: "calc__nope", description: "In the server's namespace",
  input: { type: "object" }, run() { return { ran: "sandbox", deno: typeof Deno }; } };`,
  // Named like the server's tools, outside its namespace.
  "calc_nope.ts":
    `export default { kind: "tool", name: "calc_nope", description: "A drop-in with an imported-looking name",
  input: { type: "object" }, run() { return { ran: "sandbox", deno: typeof Deno }; } };`,
  "adder.ts":
    `export default { kind: "skill", name: "adder", description: "Adds on the imported server",
  tools: ["calc__add", "calc_nope"], timeout_seconds: 30, input: { type: "object" },
  async run(_args, ctx) {
    return { sum: await ctx.tools.call("calc__add", { a: 2, b: 3 }),
      nope: await ctx.tools.call("calc_nope", {}) };
  } };`,
};

Deno.test("an imported tool's call reaches its server, from a client and a skill; a drop-in with an imported-looking name runs in the sandbox", async () => {
  const skills = await Deno.makeTempDir();
  for (const [file, text] of Object.entries(DROP_INS)) {
    await Deno.writeTextFile(join(skills, file), text);
  }
  const base = defaultConfig();
  const host = createHost({
    config: {
      skills: [skills],
      builtinSkills: false,
      sandbox: { ...base.sandbox, cacheDir: null },
      mcpServers: {
        calc: denoServer(SERVER),
      },
    },
  });
  try {
    const report = await host.ready;
    await host.mcpServers.ready;
    const refused = report.refused?.find((r) => r.name === "calc__nope");
    assert.match(
      refused?.reason ?? "",
      /in the namespace of the MCP server "calc"/,
      JSON.stringify(report.refused),
    );
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const client = await connect(url.replace("http", "ws") + "/a2e");
    try {
      const listed = await client.tools.list();
      const add = listed.find((t) => t.name === "calc__add");
      assert.deepEqual(add?.tags, ["mcp"], JSON.stringify(add));
      assert.equal(listed.some((t) => t.name === "calc__nope"), false);
      assert.deepEqual(listed.find((t) => t.name === "calc_nope")?.tags, []);

      const sum = await client.tools.call("calc__add", { a: 2, b: 3 });
      assert.equal(sum.success, true, sum.error ?? "");
      assert.deepEqual(sum.data, { sum: 5 });

      const nope = await client.tools.call("calc_nope", {});
      assert.equal(nope.success, true, nope.error ?? "");
      assert.deepEqual(nope.data, { ran: "sandbox", deno: "object" });

      const skill = await client.skills.call("adder", {});
      assert.equal(skill.success, true, JSON.stringify(skill));
      assert.deepEqual(skill.data, {
        sum: { sum: 5 },
        nope: { ran: "sandbox", deno: "object" },
      });
    } finally {
      await client.close();
    }
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(skills, { recursive: true });
  }
});
