/**
 * The one place skillbox starts an imported MCP server's process. A stdio
 * MCP server is untrusted code: it gets a cleared environment (only the env
 * its config declares, plus `PATH` so the command resolves), its own
 * working folder, and piped stdio. OS confinement (bubblewrap, see
 * `runtime/sandbox/`) wraps the command here once it exists.
 *
 * @module
 */

/** How to start a stdio MCP server (from `mcp_servers` in the config). */
export interface McpProcessSpec {
  /** The executable. */
  command: string;
  /** Its arguments. @default [] */
  args?: readonly string[];
  /** The only environment variables it sees. @default {} */
  env?: Readonly<Record<string, string>>;
  /** Its working folder. @default the host's */
  cwd?: string;
}

/**
 * Builds the command that runs an MCP server.
 *
 * @param spec command, arguments, environment and folder
 * @returns the command, stdio piped, environment cleared
 * @example
 * ```ts
 * import { mcpServerCommand } from "./spawn.ts";
 * import assert from "node:assert/strict";
 * const child = mcpServerCommand({ command: "env", env: { ONLY: "this" } })
 *   .spawn();
 * await child.stdin.close();
 * const out = new TextDecoder().decode((await child.output()).stdout);
 * assert.match(out, /ONLY=this/);
 * assert.doesNotMatch(out, /HOME=/);
 * ```
 */
export function mcpServerCommand(spec: McpProcessSpec): Deno.Command {
  const path = Deno.env.get("PATH");
  return new Deno.Command(spec.command, {
    args: [...(spec.args ?? [])],
    cwd: spec.cwd,
    clearEnv: true,
    env: { ...(path && !spec.env?.PATH ? { PATH: path } : {}), ...spec.env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  });
}
