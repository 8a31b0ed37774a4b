/**
 * A tool whose input schema applies itself twice to the same child (`L` is
 * an `allOf` of two branches whose property `a` refers back to `L`) passes
 * the load-time fan-out check, which counts subschemas on one value only,
 * yet doubles the validator's work at every level of the value. Called with
 * a value twenty levels deep down one branch, it would hold the host's
 * thread for seconds (and for ever at forty); it must be refused with the
 * step bound while another client's call is served.
 *
 * The MCP SDK's client checks an imported tool's structured result against
 * the server's output schema, on the host's thread too: the same schema
 * there, and a regular expression that backtracks, must not hold it.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost } from "../../runtime/host.ts";
import { connect } from "../../client/mod.ts";
import { withImported } from "../support/raw_mcp_server.ts";

const DOUBLING =
  `const branch = () => ({ properties: { a: { $ref: "#/$defs/L" } } });
export default {
  kind: "tool",
  name: "doubling",
  description: "Checks each level of its argument twice",
  input: {
    type: "object",
    properties: { x: { $ref: "#/$defs/L" } },
    $defs: { L: { allOf: [branch(), branch()] } },
  },
  run: () => ({ text: "checked" }),
};
`;

const HELLO = `export default {
  kind: "tool",
  name: "hello",
  description: "Says hello",
  run: () => ({ text: "hello" }),
};
`;

// `{x: {a: {a: ...}}}`: one object per level, a single path down.
function chain(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return { x: value };
}

Deno.test("a value that doubles its schema's work at each level is refused while others are served", async () => {
  const ops = await Deno.makeTempDir({ prefix: "schema_steps_" });
  await Deno.writeTextFile(join(ops, "doubling.ts"), DOUBLING);
  await Deno.writeTextFile(join(ops, "hello.ts"), HELLO);
  const host = createHost({
    log: () => {},
    config: {
      skills: [ops],
      builtinSkills: false,
      sandbox: {
        cacheDir: null,
        memoryMb: 256,
        maxIdleProcesses: 4,
        spareWorkers: 1,
        maxResultBytes: 1 << 20,
      },
    },
  });
  try {
    const report = await host.ready;
    assert.deepEqual(report.errors, []);
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const ws = url.replace("http", "ws") + "/a2e";
    const attacker = await connect(ws);
    const other = await connect(ws);
    try {
      // A shallow value is checked and the tool runs: the schema is usable.
      const shallow = await attacker.tools.call("doubling", chain(4));
      assert.equal(shallow.success, true, JSON.stringify(shallow));
      const [deep, hello] = await Promise.all([
        attacker.tools.call("doubling", chain(20)).then(
          (outcome) => JSON.stringify(outcome),
          (error: Error) => error.message,
        ),
        other.tools.call("hello", {}),
      ]);
      assert.match(
        deep,
        /Invalid arguments for tool \\?"doubling\\?": The value takes more than 200,000 schema steps to check/,
      );
      assert.doesNotMatch(deep, /checked/);
      assert.equal(hello.success, true, JSON.stringify(hello));
      const again = await other.tools.call("hello", {});
      assert.equal(again.success, true, JSON.stringify(again));
    } finally {
      await attacker.close();
      await other.close();
    }
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(ops, { recursive: true });
  }
});

// A raw stdio MCP server: tool "deep" declares the doubling output schema
// and answers a value `DEPTH` levels deep; tool "regex" declares a pattern
// that backtracks for ever on "a…a!" and answers such a string.
const SERVER = `const DEPTH = Number(Deno.args[0]);
const branch = () => ({ properties: { a: { $ref: "#/$defs/L" } } });
const tools = [{
  name: "deep",
  inputSchema: { type: "object" },
  outputSchema: {
    type: "object",
    properties: { x: { $ref: "#/$defs/L" } },
    $defs: { L: { allOf: [branch(), branch()] } },
  },
}, {
  name: "regex",
  inputSchema: { type: "object" },
  outputSchema: {
    type: "object",
    properties: { s: { type: "string", pattern: "^(a+)+$" } },
  },
}];
function answer(id, result) {
  const line = JSON.stringify({ jsonrpc: "2.0", id, result }) + "\\n";
  const bytes = new TextEncoder().encode(line);
  for (let done = 0; done < bytes.length;) {
    done += Deno.stdout.writeSync(bytes.subarray(done));
  }
}
function handle(msg) {
  if (msg.id === undefined) return;
  if (msg.method === "initialize") {
    return answer(msg.id, {
      protocolVersion: msg.params.protocolVersion,
      serverInfo: { name: "deep", version: "1" },
      capabilities: { tools: {} },
    });
  }
  if (msg.method === "tools/list") return answer(msg.id, { tools });
  if (msg.method === "tools/call") {
    let structuredContent;
    if (msg.params.name === "deep") {
      let x = {};
      for (let i = 0; i < DEPTH; i++) x = { a: x };
      structuredContent = { x };
    } else {
      structuredContent = { s: "a".repeat(28) + "!" };
    }
    return answer(msg.id, {
      content: [{ type: "text", text: "done" }],
      structuredContent,
    });
  }
  answer(msg.id, {});
}
let buffered = "";
const decoder = new TextDecoder();
for await (const chunk of Deno.stdin.readable) {
  buffered += decoder.decode(chunk, { stream: true });
  let nl;
  while ((nl = buffered.indexOf("\\n")) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (line.trim() !== "") handle(JSON.parse(line));
  }
}
`;

Deno.test("an imported server's output schema is checked with the same bound and no regex", async () => {
  const dir = await Deno.makeTempDir({ prefix: "schema_steps_mcp_" });
  const script = join(dir, "server.ts");
  await Deno.writeTextFile(script, SERVER);
  try {
    await withImported({
      servers: {
        deep: {
          command: Deno.execPath(),
          args: ["run", script, "28"],
          startTimeoutMs: 30_000,
        },
      },
    }, async (servers) => {
      await servers.start();
      const call = { timeoutMs: 30_000, onEvent: () => {} };
      // Before: Ajv checked the 28-level answer against the doubling schema
      // (seconds of the host's thread, for ever a few levels deeper).
      const deep = await servers.call("deep", "deep", {}, call);
      assert.equal(deep.ok, false, JSON.stringify(deep));
      assert.match(
        deep.ok ? "" : deep.message,
        /The value takes more than 200,000 schema steps to check/,
      );
      // Before: Ajv ran "^(a+)+$" on "a" × 28 and "!" (2^28 steps, and it
      // refused the answer); as for the server's input schemas, the host drops
      // its regular expressions and leaves them to the server.
      const regex = await servers.call("deep", "regex", {}, call);
      assert.equal(regex.ok, true, JSON.stringify(regex));
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
