/**
 * A module that asks `ctx.fetch` for `http://` on a host the operator bound
 * a secret to, through a real host: the module chooses the scheme, so a
 * secret bound to a host name alone would cross the network in clear text,
 * readable by anyone on the path. It goes over `https:` only, unless the
 * operator's binding names `http://`; otherwise the request is refused
 * before any connection, saying why.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { Host } from "../../runtime/host.ts";
import { startToolsHost } from "./_tools_host.ts";

const SECRET = "op-secret-clear-9b2e";
const SECRET_ENV = "SKILLBOX_TEST_SCHEME_SECRET";

const TOOLS: Record<string, string> = {
  // Fetches one URL and reports what came back, or why not.
  "peek.ts": `export default { kind: "tool", name: "peek",
  description: "Fetches a URL", input: { type: "object" },
  permissions: { net: ["localhost"] },
  async run(args, ctx) {
    try {
      const res = await ctx.fetch({ url: args.url });
      return { status: res.status };
    } catch (error) {
      return { error: String(error.message ?? error) };
    }
  } };`,
};

interface Fixture {
  host: Host;
  port: number;
  /** The Authorization header of every request the server saw. */
  seen: Array<string | null>;
  close(): Promise<void>;
}

async function start(binding: string): Promise<Fixture> {
  const seen: Fixture["seen"] = [];
  // A plain-HTTP server: what it sees is what anyone on the path sees.
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      seen.push(req.headers.get("authorization"));
      return new Response("ok");
    },
  );
  Deno.env.set(SECRET_ENV, `Bearer ${SECRET}`);
  const { host, close } = await startToolsHost(TOOLS, {
    secrets: [{
      host: binding,
      header: "Authorization",
      valueEnv: SECRET_ENV,
      toolkits: [],
    }],
  });
  return {
    host,
    port: server.addr.port,
    seen,
    async close() {
      await close();
      await server.shutdown();
      Deno.env.delete(SECRET_ENV);
    },
  };
}

Deno.test("a module cannot make the host send an operator secret over plain http", async (t) => {
  for (const binding of ["localhost", "https://localhost"]) {
    await t.step(`bound to "${binding}"`, async () => {
      const f = await start(binding);
      try {
        const result = await f.host.callTool("peek", {
          url: `http://localhost:${f.port}/steal`,
        });
        assert.equal(result.success, true, String(result.error));
        assert.deepEqual(f.seen, [], "nothing went out in clear text");
        const { error } = result.data as { error?: string };
        assert.match(
          String(error),
          /Cannot send a request to "http:\/\/localhost:\d+": an operator secret for it goes over https only/,
        );
        assert.doesNotMatch(JSON.stringify(result), new RegExp(SECRET));
      } finally {
        await f.close();
      }
    });
  }
});

Deno.test("an operator who binds a secret to http:// gets it sent over http", async () => {
  const f = await start("http://localhost");
  try {
    const result = await f.host.callTool("peek", {
      url: `http://localhost:${f.port}/own`,
    });
    assert.equal(result.success, true, String(result.error));
    assert.deepEqual(result.data, { status: 200 });
    assert.deepEqual(f.seen, [`Bearer ${SECRET}`]);
  } finally {
    await f.close();
  }
});
