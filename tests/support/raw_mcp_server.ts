/**
 * A stdio MCP server in a few lines of raw JSON-RPC, for the tests of
 * imported servers: it answers what its {@link RawServerConfig} says, as
 * it is (including what no well-behaved server would send). Run as a
 * script, it serves; imported, {@link rawServer} gives the `mcp_servers`
 * entry that starts it, and {@link withImported} imports servers as the
 * host does.
 *
 * @module
 */

import type {
  ImportedServers,
  ImportedServersOptions,
} from "../../runtime/mcp/imported_servers.ts";

/** What the raw server answers. */
export interface RawServerConfig {
  /** Its `tools/list` answers, in turn and round again. @default [[]] */
  listings?: unknown[][];
  /** A listing after the first is answered this late. @default 0 */
  relistDelayMs?: number;
  /** What `tools/call` answers. @default {content: []} */
  result?: unknown;
  /** The error message a method answers instead, by method. */
  errors?: Record<string, string>;
  /**
   * After which answers it sends `notifications/tools/list_changed`: each
   * call's, the first listing's, each listing's after the first.
   * @default []
   */
  notifyAfter?: ("call" | "list" | "relist")[];
  /**
   * It serves the skills extension, and answers `skills/list` (no skills)
   * only once it has answered a second `tools/list`. @default false
   */
  skillsAfterRelist?: boolean;
}

/**
 * Writes `config` to a temporary file and gives the `mcp_servers` entry
 * that runs this file as a server on it.
 *
 * @param config what the server answers
 * @param env the entry's extra `env` (its values are the server's secrets)
 * @returns the entry, and the disposal that removes the file
 */
export async function rawServer(
  config: RawServerConfig,
  env: Record<string, string> = {},
): Promise<{
  spec: { command: string; args: string[]; env: Record<string, string> };
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(file, JSON.stringify(config));
  return {
    spec: {
      command: Deno.execPath(),
      args: [
        "run",
        "--no-prompt",
        `--allow-read=${file}`,
        import.meta.filename!,
        file,
      ],
      env: { DENO_DIR: Deno.env.get("DENO_DIR") ?? "", ...env },
    },
    [Symbol.asyncDispose]: () => Deno.remove(file),
  };
}

/**
 * Runs `fn` with the imported servers `options` describe, not confined
 * (the tests are about what a server says, not where it runs), and closes
 * them after.
 *
 * @param options the servers and hooks (`confinement` defaults to off)
 * @param fn the test body; it starts the servers
 * @returns what `fn` returns
 */
export async function withImported<T>(
  options: ImportedServersOptions,
  fn: (servers: ImportedServers) => Promise<T>,
): Promise<T> {
  // Loaded here, not at the top: this file also runs as the server, which
  // has no business loading the host.
  const { createImportedServers } = await import(
    "../../runtime/mcp/imported_servers.ts"
  );
  const servers = createImportedServers({
    confinement: () =>
      Promise.resolve({
        mode: "off",
        active: false,
        reason: "off in this test",
        layout: null,
      }),
    ...options,
  });
  try {
    return await fn(servers);
  } finally {
    await servers.close();
  }
}

async function serve(config: RawServerConfig): Promise<void> {
  const listings = config.listings ?? [[]];
  const notify = new Set(config.notifyAfter);
  const write = (m: unknown) =>
    Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  const changed = () =>
    write({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
  let lists = 0;
  let answerSkills: (() => void) | null = null;
  let buffer = "";
  const input = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
  for await (const text of input) {
    buffer += text;
    for (let end; (end = buffer.indexOf("\n")) >= 0;) {
      const m = JSON.parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      if (m.id === undefined) continue;
      const answer = (result: unknown) =>
        write({ jsonrpc: "2.0", id: m.id, result });
      const error = config.errors?.[m.method];
      if (error !== undefined) {
        write({
          jsonrpc: "2.0",
          id: m.id,
          error: { code: -32000, message: error },
        });
      } else if (m.method === "initialize") {
        answer({
          protocolVersion: m.params.protocolVersion,
          capabilities: {
            tools: {},
            ...(config.skillsAfterRelist
              ? { extensions: { "io.modelcontextprotocol/skills": {} } }
              : {}),
          },
          serverInfo: { name: "raw", version: "1" },
        });
      } else if (m.method === "tools/list") {
        const tools = listings[lists % listings.length];
        const first = lists++ === 0;
        setTimeout(() => {
          answer({ tools });
          if (notify.has(first ? "list" : "relist")) changed();
          if (!first) answerSkills?.();
        }, first ? 0 : config.relistDelayMs ?? 0);
      } else if (m.method === "skills/list") {
        answerSkills = () => answer({ skills: [] });
        if (lists > 1) answerSkills();
      } else if (m.method === "tools/call") {
        answer(config.result ?? { content: [] });
        if (notify.has("call")) changed();
      }
    }
  }
}

if (import.meta.main) {
  await serve(JSON.parse(await Deno.readTextFile(Deno.args[0]!)));
}
