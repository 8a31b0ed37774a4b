/**
 * A real host over the MCP fixtures for the end-to-end tests (their SDK
 * client is `connectMcp` of `tests/support/mcp_client.ts`).
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createHost, type Host } from "../../runtime/host.ts";
import type { McpServerSpec } from "../../runtime/mcp/imported_servers.ts";
import { testSandbox, writeFixtures } from "../support/mcp_fixtures.ts";

/** What a test body gets. */
export interface Fixture {
  host: Host;
  url: string;
  skills: string;
  markers: string;
}

/** Options of {@link withHost}. */
export interface HostFixtureOptions {
  tokens?: string[];
  llmUrl?: string;
  /** Merged into `policy` (which always grants writing the markers). */
  policy?: Record<string, unknown>;
  /** Extra files for the skills folder, by relative path. */
  files?: Record<string, string>;
  /** Runs on the skills folder before the host loads it. */
  setup?: (skills: string) => Promise<void>;
  /** Whether the skills folder holds the MCP fixtures. @default true */
  fixtures?: boolean;
  /** Imported servers: the body runs once each came up or failed. */
  mcpServers?: Record<string, McpServerSpec>;
  /** Receives the host's log lines. @default the host's default */
  log?: (line: string) => void;
}

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The `mcp_servers` entry that runs the Deno script `file` with all
 * permissions, from the repo (confined, the only host folder it sees).
 *
 * @param file the server script
 * @param args its arguments
 * @returns the entry
 */
export function denoServer(
  file: string,
  ...args: string[]
): {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
} {
  return {
    command: Deno.execPath(),
    args: ["run", "-A", file, ...args],
    env: { DENO_DIR: Deno.env.get("DENO_DIR") ?? "" },
    cwd: REPO,
  };
}

/** Runs `body` against a listening host, then closes it and its folders. */
export async function withHost(
  options: HostFixtureOptions,
  body: (f: Fixture) => Promise<void>,
): Promise<void> {
  const skills = await Deno.makeTempDir();
  const markers = await Deno.makeTempDir();
  if (options.fixtures !== false) await writeFixtures(skills, markers);
  for (const [name, text] of Object.entries(options.files ?? {})) {
    await Deno.mkdir(dirname(`${skills}/${name}`), { recursive: true });
    await Deno.writeTextFile(`${skills}/${name}`, text);
  }
  await options.setup?.(skills);
  const host = createHost({
    log: options.log,
    config: {
      skills: [skills],
      builtinSkills: false,
      mcpServers: options.mcpServers,
      tokens: options.tokens ?? [],
      sandbox: testSandbox(),
      policy: { permissions: { write: [markers] }, ...options.policy },
      llm: options.llmUrl
        ? [{
          provider_name: "openai",
          provider_credentials: { api_key: "test-key" },
          provider_config: { base_url: options.llmUrl, model: "mock-model" },
          is_default: true,
        }]
        : [],
    },
  });
  try {
    await host.ready;
    await host.mcpServers.ready;
    const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
    await body({ host, url, skills, markers });
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(skills, { recursive: true });
    await Deno.remove(markers, { recursive: true });
  }
}

/** The first text block of a result. */
export function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === "text" ? first.text : "";
}

/** Resolves with `promise`, or rejects saying `what` did not happen in `ms`. */
export async function within<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
