/**
 * The one place skillbox starts an imported MCP server's process. A stdio
 * MCP server is untrusted code: it gets a cleared environment (only the env
 * its config declares, plus `PATH` so the command resolves), its own
 * working folder, and piped stdio. When OS confinement is active it runs
 * inside the same bubblewrap confinement as a sandbox process (the command
 * line comes from `confineArgs`, the one builder): its own user, PID and
 * network namespaces (no network of its own: a server whose config names
 * `hosts` reaches them, and only them, through the host's egress proxy,
 * via a relay started in its namespace before it), its command's binary read-only
 * (and the system folders when it is not the Deno binary), Deno's module
 * cache read-only, its working folder read-only unless `writable`, a
 * private `/tmp`, and it dies with the host.
 *
 * @module
 */

import { isAbsolute, join, resolve } from "node:path";
import { confineArgs } from "../sandbox/confinement_args.ts";
import type { ConfinementLayout } from "../sandbox/confinement_args.ts";
import { EgressBroker } from "../egress/broker.ts";
import { type EgressProxy, openEgressProxy } from "../egress/proxy.ts";
import {
  RELAY_FILES,
  relayDenoArgs,
  relayEnv,
} from "../egress/relay_command.ts";

/** How to start a stdio MCP server (from `mcp_servers` in the config). */
export interface McpProcessSpec {
  /** The executable. */
  command: string;
  /** Its arguments. @default [] */
  args?: readonly string[];
  /** The only environment variables it sees. @default {} */
  env?: Readonly<Record<string, string>>;
  /**
   * Its working folder. Confined, it is the only host folder it sees (bound
   * read-only unless `writable`). @default the host's (unconfined); none,
   * `/` (confined)
   */
  cwd?: string;
  /** Whether a confined server may write its working folder. @default false */
  writable?: boolean;
  /**
   * Hosts a confined server may reach (`name`, `name:port`), only through
   * the egress proxy, which checks them as the broker does. @default []:
   * no network
   */
  hosts?: readonly string[];
  /**
   * The host's egress broker (its address rules; an `EgressBroker`).
   * @default a broker that allows no private hosts
   */
  egress?: {
    checkTarget(
      url: URL,
      allow: string[][],
      signal: AbortSignal,
    ): Promise<string>;
  };
}

/** A command to start (a `Deno.Command`, or a confined one with a proxy). */
export interface McpServerCommand {
  /** Starts the process. */
  spawn(): Deno.ChildProcess;
}

/**
 * Builds the command that runs an MCP server.
 *
 * @param spec command, arguments, environment and folder
 * @param layout the confinement layout when confinement is active, else
 * null (the server runs with a cleared environment only)
 * @returns the command, stdio piped, environment cleared
 * @example Unconfined: only the declared environment
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
export function mcpServerCommand(
  spec: McpProcessSpec,
  layout: ConfinementLayout | null = null,
): McpServerCommand {
  const path = Deno.env.get("PATH");
  const env = {
    ...(path && !spec.env?.PATH ? { PATH: path } : {}),
    ...spec.env,
  };
  if (layout) return { spawn: () => spawnConfined(layout, spec, env) };
  return new Deno.Command(spec.command, {
    args: [...(spec.args ?? [])],
    cwd: spec.cwd,
    clearEnv: true,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  });
}

/** Starts a confined server, with its own egress proxy when it has hosts. */
function spawnConfined(
  layout: ConfinementLayout,
  spec: McpProcessSpec,
  env: Record<string, string>,
): Deno.ChildProcess {
  const proxy = (spec.hosts ?? []).length === 0 ? null : openEgressProxy({
    broker: spec.egress ?? new EgressBroker(),
    allow: spec.hosts ?? [],
    principal: `MCP server "${spec.command}"`,
  });
  try {
    const confined = confinedServerArgs(layout, spec, env, proxy);
    const child = new Deno.Command(confined.command, {
      args: confined.args,
      clearEnv: true,
      env: confined.env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    if (proxy) child.status.then(proxy.close, proxy.close);
    return child;
  } catch (err) {
    proxy?.close();
    throw err;
  }
}

/**
 * The bwrap command line of a confined MCP server, built by `confineArgs`
 * with the server's binary in the place of the Deno binary: the grant is
 * its working folder (read, or write when `writable`), plus `run` of the
 * command when it is not Deno (which binds the system folders read-only so
 * that a system binary and its libraries exist). No `net` grant: the
 * server gets its own empty network namespace.
 *
 * @param layout where bwrap, Deno, its libraries and cache live
 * @param spec the server's command, arguments and folder
 * @param env its whole environment (declared env and `PATH`)
 * @param egress the server's open egress proxy, when its config names
 * hosts: the relay runs first, then the server @default null
 * @returns the bwrap command, its arguments and environment
 * @throws {Error} when the command is not found on `PATH`
 * @example A Deno server reads its folder, nothing else
 * ```ts
 * import { confinedServerArgs } from "./spawn.ts";
 * import assert from "node:assert/strict";
 * const deno = Deno.realPathSync(Deno.execPath());
 * const layout = { bwrap: "/usr/bin/bwrap", execPath: deno, libDirs: [],
 *   links: [], denoDir: "/c", systemDirs: ["/usr"] };
 * const cmd = confinedServerArgs(layout,
 *   { command: deno, args: ["run", "s.ts"], cwd: "/srv/mcp" }, {});
 * assert.ok(cmd.args.includes("--unshare-net"));
 * assert.ok(!cmd.args.includes("/usr"));
 * const at = cmd.args.indexOf("/srv/mcp");
 * assert.equal(cmd.args[at - 1], "--ro-bind-try");
 * assert.equal(cmd.args[cmd.args.indexOf("--chdir") + 1], "/srv/mcp");
 * assert.deepEqual(cmd.args.slice(-3), [deno, "run", "s.ts"]);
 * ```
 */
export function confinedServerArgs(
  layout: ConfinementLayout,
  spec: McpProcessSpec,
  env: Record<string, string>,
  egress: Pick<EgressProxy, "path" | "token"> | null = null,
): { command: string; args: string[]; env: Record<string, string> } {
  const binary = resolveCommand(spec.command, env.PATH ?? "");
  const isDeno = binary === layout.execPath;
  const folder = spec.cwd === undefined ? undefined : resolve(spec.cwd);
  const grant = {
    ...(folder
      ? (spec.writable ? { write: [folder] } : { read: [folder] })
      : {}),
    ...(isDeno ? {} : { run: [binary] }),
  };
  const serverArgs = [...(spec.args ?? [])];
  // With hosts, the Deno binary runs the relay, which starts the server.
  const confined = egress
    ? confineArgs(layout, {
      grant,
      runtimeFiles: isDeno ? [...RELAY_FILES] : [...RELAY_FILES, binary],
      denoArgs: relayDenoArgs(egress, [binary, ...serverArgs]),
      env: { ...env, ...relayEnv() },
      egressSocket: egress.path,
    })
    : confineArgs({ ...layout, execPath: binary }, {
      grant,
      runtimeFiles: [],
      denoArgs: serverArgs,
      env,
    });
  const args = confined.args;
  if (folder) {
    // The builder starts every process in `/`; a server starts in its
    // folder. Options end at the first "--" (every bound path is absolute).
    const end = args.indexOf("--");
    const at = args.lastIndexOf("--chdir", end);
    if (end < 0 || at < 0) throw new Error("Unexpected bwrap command line");
    args[at + 1] = folder;
  }
  return { command: confined.command, args, env: confined.env };
}

/** The real path of a command, looked up on `PATH` unless it has a slash. */
function resolveCommand(command: string, path: string): string {
  const candidates = command.includes("/")
    ? [command]
    : path.split(":").filter((d) => d && isAbsolute(d)).map((d) =>
      join(d, command)
    );
  for (const candidate of candidates) {
    try {
      if (Deno.statSync(candidate).isFile) return Deno.realPathSync(candidate);
    } catch {
      // Not here.
    }
  }
  throw new Error(`The command "${command}" was not found`);
}
