/**
 * A real host importing MCP servers, with an official-SDK client on its
 * `/mcp` endpoint, for the confined-import tests; and a Python virtual
 * environment holding a module only it has, for the Python fixture server
 * (`fixtures/venv_server.py`).
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultConfig } from "../../runtime/config.ts";
import { createHost, type Host } from "../../runtime/host.ts";
import type { McpServerSpec } from "../../runtime/mcp/imported_servers.ts";
import { within } from "./_host.ts";
import { testSandbox } from "../support/mcp_fixtures.ts";
import { skipOutsideCi } from "../support/skip.ts";

/** The stdlib-only Python MCP server (tool `where`). */
export const PYTHON_SERVER: string = fileURLToPath(
  new URL("./fixtures/venv_server.py", import.meta.url),
);

/** What a test body gets. */
export interface ImportFixture {
  client: Client;
  host: Host;
  /** The tools `server` contributes, once started; throws its failure. */
  toolsOf(server: string): Promise<string[]>;
  /** Why `server` failed to start (waits for it). */
  failureOf(server: string): Promise<string>;
}

/** Runs `body` with a listening host importing `servers` and an SDK client. */
export async function withServers(
  servers: Record<string, McpServerSpec>,
  body: (f: ImportFixture) => Promise<void>,
  options: { configPath?: string; allowPrivateHosts?: string[] } = {},
): Promise<void> {
  const skills = await Deno.makeTempDir();
  const failures = new Map<string, string>();
  const events = new EventTarget();
  const host = createHost({
    configPath: options.configPath,
    log: (line) => {
      const failed = line.match(/^MCP server "([^"]+)" failed: ([^]*)$/);
      if (failed) failures.set(failed[1]!, failed[2]!);
      events.dispatchEvent(new Event("change"));
    },
    config: {
      skills: [skills],
      builtinSkills: false,
      mcpServers: servers,
      store: null,
      egress: {
        ...defaultConfig().egress,
        allowPrivateHosts: options.allowPrivateHosts ?? [],
      },
      sandbox: testSandbox(),
    },
  });
  const client = new Client({ name: "test", version: "1.0.0" });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    events.dispatchEvent(new Event("change"));
  });
  const next = () =>
    new Promise<void>((resolve) =>
      events.addEventListener("change", () => resolve(), { once: true })
    );
  // Servers may join after the host listens: wait for the list to change
  // or the failure to be logged, never for a time.
  const toolsOf = async (server: string): Promise<string[]> => {
    while (true) {
      const changed = next();
      const { tools } = await client.listTools();
      const names = tools.map((t: Tool) => t.name).filter((n: string) =>
        n.startsWith(`${server}__`)
      ).sort();
      if (names.length > 0) return names;
      const failure = failures.get(server);
      if (failure !== undefined) {
        throw new Error(`The server "${server}" failed: ${failure}`);
      }
      await within(changed, 60_000, `The server "${server}" started`);
    }
  };
  const failureOf = async (server: string): Promise<string> => {
    while (!failures.has(server)) {
      await within(next(), 60_000, `The server "${server}" failed`);
    }
    return failures.get(server)!;
  };
  try {
    await host.ready;
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url + "/mcp")),
    );
    await body({ client, host, toolsOf, failureOf });
  } finally {
    await client.close();
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(skills, { recursive: true });
  }
}

/** Calls a tool; its first text block and whether it is an error. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; text: string }> {
  const result = await client.callTool({
    name,
    arguments: args,
  }) as CallToolResult;
  const first = result.content[0];
  return {
    isError: result.isError === true,
    text: first?.type === "text" ? first.text : "",
  };
}

/**
 * Whether `python3 -m venv` works here; null when it does, else why not
 * (the Python tests then skip with the reason, except under `CI=true`).
 */
export const PYTHON_MISSING: string | null = await (async () => {
  try {
    const { root } = await pythonVenv();
    await Deno.remove(root, { recursive: true });
    return null;
  } catch (error) {
    return (error as Error).message;
  }
})();

/** Ignore a Python test: no venv here, and not in CI (where it must run). */
export const IGNORE_PYTHON: boolean = skipOutsideCi(
  "the Python MCP server tests",
  PYTHON_MISSING,
);

/**
 * A virtual environment (stdlib only, no pip) whose site-packages holds
 * `venv_probe`, the module the Python fixture server imports.
 *
 * @returns its root and its interpreter as named (`<root>/bin/python`)
 */
export async function pythonVenv(): Promise<{ root: string; python: string }> {
  const root = await Deno.makeTempDir({ prefix: "skillbox-venv-" });
  const made = await new Deno.Command("python3", {
    args: ["-m", "venv", "--without-pip", root],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!made.success) {
    throw new Error(
      `python3 -m venv failed: ${new TextDecoder().decode(made.stderr)}`,
    );
  }
  for await (const entry of Deno.readDir(join(root, "lib"))) {
    await Deno.writeTextFile(
      join(root, "lib", entry.name, "site-packages", "venv_probe.py"),
      'VALUE = "found in the virtual environment"\n',
    );
  }
  return { root, python: join(root, "bin", "python") };
}
