/**
 * Credentials an operator writes into an imported MCP server's entry
 * outside `env` and `headers` are operator secrets too: a URL server's
 * userinfo and query values (`https://user:pw@host/mcp?key=...`), and a
 * stdio server's secret arguments (`--api-key X`, `--token=X`,
 * `API_KEY=X`). A server that says its request URL back in an error, or
 * prints its argv on stderr as it dies, must not carry them to clients (A2E
 * and MCP), the console's catalog and history, or the host's log. Against a
 * host in its own process, configured as an operator would.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { withMcpClient } from "../support/mcp_client.ts";
import { connectClient } from "../support/tools_harness.ts";
import {
  assertNoSecret,
  consoleText,
  startHostProcess,
} from "./_host_process.ts";

const PASSWORD = "s3cret-pass";
const QUERY_KEY = "k3y-value-123";
const API_KEY = "sk-test-123456";
const TOKEN = "tok-abcdef-99";
const ENV_ARG = "ak-xyz-7777";

/**
 * A Streamable HTTP server whose one tool `fail` is answered with HTTP 500
 * and a body that says back the whole request URL and its Authorization
 * header, as a careless gateway's error page does.
 */
function serveUrlEcho(
  requireAuthorization?: string,
): { port: number } & AsyncDisposable {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      if (
        requireAuthorization !== undefined &&
        request.headers.get("authorization") !== requireAuthorization
      ) {
        return new Response("unauthorized", { status: 401 });
      }
      if (request.method === "POST") {
        const body = await request.clone().json().catch(() => null);
        if (body?.method === "tools/call") {
          return new Response(
            `upstream refused ${request.url} (authorization: ${
              request.headers.get("authorization")
            })`,
            { status: 500 },
          );
        }
      }
      const mcp = new Server({ name: "creds", version: "1.0.0" }, {
        capabilities: { tools: {} },
      });
      mcp.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [{
          name: "fail",
          description: "Fails, saying its request URL back",
          inputSchema: { type: "object" },
        }],
      }));
      mcp.setRequestHandler(CallToolRequestSchema, () => ({ content: [] }));
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await mcp.connect(transport);
      return await transport.handleRequest(request);
    },
  );
  return {
    port: server.addr.port,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

Deno.test("a URL MCP server's userinfo password and query key, said back in an error, are redacted for clients, the console and the log", async () => {
  await using echo = serveUrlEcho();
  const skills = await Deno.makeTempDir({ prefix: "creds-" });
  try {
    await using host = await startHostProcess({
      skills: [skills],
      egress: { allow_private_hosts: ["127.0.0.1"] },
      mcp_servers: {
        creds: {
          url:
            `http://operator:${PASSWORD}@127.0.0.1:${echo.port}/mcp?key=${QUERY_KEY}&api_key=${QUERY_KEY}-2`,
        },
      },
    });
    // The password goes to the server as Basic auth, which it says back.
    const secrets = [PASSWORD, QUERY_KEY, btoa(`operator:${PASSWORD}`)];
    await host.waitForLine(/MCP server "creds" is ready/, 30_000);
    const a2e = await connectClient(`${host.url.replace("http", "ws")}/a2e`);
    try {
      const called = await a2e.request("tool/call/req", {
        tool_name: "creds__fail",
        arguments: {},
      });
      const answer = JSON.stringify(called.final);
      assert.equal((called.final.data as { success: boolean }).success, false);
      // The server did say its URL back: it is there, redacted.
      assert.match(answer, /upstream refused/);
      assert.match(answer, /\[redacted\]/);
      assertNoSecret(answer, secrets, "the A2E answer");
    } finally {
      await a2e.close();
    }

    await withMcpClient(host.url, undefined, async (mcp) => {
      const result = await mcp.callTool({ name: "creds__fail", arguments: {} });
      const text = JSON.stringify(result);
      assert.equal(result.isError, true);
      assert.match(text, /upstream refused/);
      assertNoSecret(text, secrets, "the MCP result");
    });

    const shown = await consoleText(host);
    assert.match(shown, /upstream refused/);
    assertNoSecret(shown, secrets, "the console");
    assertNoSecret(host.lines.join("\n"), secrets, "the host's log");
  } finally {
    await Deno.remove(skills, { recursive: true });
  }
});

Deno.test("a URL MCP server's user name and password are sent as Basic auth, and an Authorization header wins", async () => {
  const basic = `Basic ${btoa(`operator:${PASSWORD}`)}`;
  await using echo = serveUrlEcho(basic);
  const skills = await Deno.makeTempDir({ prefix: "creds-" });
  try {
    await using host = await startHostProcess({
      skills: [skills],
      egress: { allow_private_hosts: ["127.0.0.1"] },
      mcp_servers: {
        basic: {
          url: `http://operator:${PASSWORD}@127.0.0.1:${echo.port}/mcp`,
        },
        // The operator's header is sent in its place: this one is refused.
        header: {
          url: `http://operator:${PASSWORD}@127.0.0.1:${echo.port}/mcp`,
          headers: { Authorization: "Bearer other-token-1" },
        },
      },
    });
    await host.waitForLine(/MCP server "basic" is ready/, 30_000);
    await host.waitForLine(
      /MCP server "header"[^\n]*(401|unauthorized|fail|not)/i,
      30_000,
    );
    const catalog = await (await fetch(`${host.url}/api/catalog`)).text();
    assert.match(catalog, /basic__fail/);
    assert.doesNotMatch(catalog, /header__fail/);
  } finally {
    await Deno.remove(skills, { recursive: true });
  }
});

// The host's toolkit list as an A2E client gets it, as JSON.
async function toolkitsOverA2e(url: string): Promise<string> {
  const a2e = await connectClient(`${url.replace("http", "ws")}/a2e`);
  try {
    return JSON.stringify((await a2e.request("toolkit/list/req", {})).final);
  } finally {
    await a2e.close();
  }
}

// Prints its arguments on stderr and dies at start, as a CLI that echoes
// its usage line does.
const ARGV_SERVER = `
Deno.stderr.writeSync(new TextEncoder().encode("bad usage: " + Deno.args.join(" ") + "\\n"));
Deno.exit(2);
`;

Deno.test("a stdio MCP server's secret args, printed on stderr as it dies, are redacted for clients, the console and the log; the others stay", async () => {
  const folder = await Deno.makeTempDir({ prefix: "argv-" });
  await Deno.writeTextFile(join(folder, "argv_server.ts"), ARGV_SERVER);
  try {
    await using host = await startHostProcess({
      skills: [folder],
      mcp_servers: {
        argv: {
          command: Deno.execPath(),
          args: [
            "run",
            "argv_server.ts",
            "--api-key",
            API_KEY,
            `--token=${TOKEN}`,
            `API_KEY=${ENV_ARG}`,
            "--port",
            "8080",
            "/srv/data-folder",
          ],
          cwd: folder,
        },
      },
    });
    const secrets = [API_KEY, TOKEN, ENV_ARG];
    await host.waitForLine(/MCP server "argv" failed/, 30_000);
    const kitText = await toolkitsOverA2e(host.url);
    // Its usage line is there, the secrets redacted, the rest readable.
    assert.match(kitText, /bad usage: --api-key \[redacted\]/);
    assert.match(kitText, /--port 8080 \/srv\/data-folder/);
    assertNoSecret(kitText, secrets, "the A2E toolkit list");

    const shown = await consoleText(host);
    assert.match(shown, /bad usage: /);
    assertNoSecret(shown, secrets, "the console");
    const log = host.lines.join("\n");
    assert.match(log, /bad usage: /);
    assertNoSecret(log, secrets, "the host's log");
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

const URL_ARG_KEY = "uk-remote-31415";
const URL_ARG_PASSWORD = "up-remote-2718";
const HEADER_TOKEN = "ht-bearer-16180";

// A bridge such as `mcp-remote` takes the remote server's URL and headers
// as arguments: `mcp-remote https://host/mcp?api_key=X --header
// "Authorization: Bearer Y"`. Neither is a secret-named flag's value.
Deno.test("a stdio MCP server's URL and header args, printed on stderr as it dies, are redacted; the rest stays", async () => {
  const folder = await Deno.makeTempDir({ prefix: "argv-" });
  await Deno.writeTextFile(join(folder, "argv_server.ts"), ARGV_SERVER);
  try {
    await using host = await startHostProcess({
      skills: [folder],
      mcp_servers: {
        bridge: {
          command: Deno.execPath(),
          args: [
            "run",
            "argv_server.ts",
            `https://ops:${URL_ARG_PASSWORD}@remote.example/mcp?api_key=${URL_ARG_KEY}`,
            "--header",
            `Authorization: Bearer ${HEADER_TOKEN}`,
            "--transport",
            "http-only",
          ],
          cwd: folder,
        },
      },
    });
    const secrets = [URL_ARG_KEY, URL_ARG_PASSWORD, HEADER_TOKEN];
    await host.waitForLine(/MCP server "bridge" failed/, 30_000);
    const kitText = await toolkitsOverA2e(host.url);
    assert.match(kitText, /bad usage: https:\/\/.*remote\.example\/mcp/);
    assert.match(kitText, /--transport http-only/);
    assertNoSecret(kitText, secrets, "the A2E toolkit list");
    assertNoSecret(await consoleText(host), secrets, "the console");
    const log = host.lines.join("\n");
    assert.match(log, /bad usage: /);
    assertNoSecret(log, secrets, "the host's log");
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});
