/**
 * What a confined process needs to reach the network through the host's
 * egress proxy, in one place for every kind of confined process: the
 * proxy socket bound into its namespace, `HTTP_PROXY`/`HTTPS_PROXY` naming
 * the relay inside it, the Deno flags the relay needs, and for a command
 * that is not a sandbox process (an MCP server, a skill's script) the
 * relay started in its place ({@link openEgressRelay}).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import {
  RELAY_PORT,
  RELAY_PROXY_URL,
  RELAY_SOCKET,
  RELAY_TOKEN_ARG,
} from "../../protocol/egress_relay.ts";
import type { EgressBroker } from "./broker.ts";
import { addedFlags } from "../sandbox/spawn.ts";
import { type EgressProxy, openEgressProxy } from "./proxy.ts";

/** The relay's main script (runs a command behind the relay). */
export const RELAY_MAIN: URL = new URL(
  "../../sandbox/process/relay_main.ts",
  import.meta.url,
);

/**
 * The relay's source files (its main and what it imports), bound
 * read-only into a namespace that runs it. A test checks this list against
 * the real module graph.
 */
export const RELAY_FILES: readonly string[] = [
  "../../sandbox/process/relay_main.ts",
  "../../sandbox/process/egress_relay.ts",
  "../../protocol/egress_relay.ts",
].map((p) => fileURLToPath(new URL(p, import.meta.url)));

/**
 * The environment that sends a process's HTTP clients to the relay (both
 * spellings, as clients differ; `NO_PROXY` emptied, so nothing goes
 * direct).
 *
 * @returns variables to add to the process's environment
 * @example
 * ```ts
 * import { relayEnv } from "./relay_command.ts";
 * import assert from "node:assert/strict";
 * assert.equal(relayEnv().HTTPS_PROXY, "http://127.0.0.1:3128");
 * ```
 */
export function relayEnv(): Record<string, string> {
  return {
    HTTP_PROXY: RELAY_PROXY_URL,
    HTTPS_PROXY: RELAY_PROXY_URL,
    http_proxy: RELAY_PROXY_URL,
    https_proxy: RELAY_PROXY_URL,
    NO_PROXY: "",
    no_proxy: "",
  };
}

/**
 * The Deno permission flags the relay itself needs: listen on its port,
 * and open the bound socket. They go to the process (main thread) only;
 * workers get their own permissions. A kind the process already has bare is
 * left out (`addedFlags`).
 *
 * @param existing the process's other Deno arguments @default []
 * @returns flags to add before the main script
 * @example
 * ```ts
 * import { relayFlags } from "./relay_command.ts";
 * import assert from "node:assert/strict";
 * assert.match(relayFlags()[0]!, /^--allow-net=127.0.0.1:3128,unix:/);
 * assert.equal(relayFlags(["--allow-net", "--allow-read"]).length, 1);
 * ```
 */
export function relayFlags(existing: readonly string[] = []): string[] {
  return addedFlags(allRelayFlags(), existing);
}

function allRelayFlags(): string[] {
  // Deno 2.9 checks a Unix socket connect as net access to `unix:<path>`
  // and as read and write of the path.
  return [
    `--allow-net=127.0.0.1:${RELAY_PORT},unix:${RELAY_SOCKET}`,
    `--allow-read=${RELAY_SOCKET}`,
    `--allow-write=${RELAY_SOCKET}`,
  ];
}

/**
 * The bwrap arguments that bind a proxy socket into the namespace.
 *
 * @param socket the proxy's socket in the host
 * @returns arguments for bwrap (before the command)
 * @example
 * ```ts
 * import { relayBind } from "./relay_command.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(relayBind("/tmp/x.sock"), ["--ro-bind", "/tmp/x.sock", "/run/skillbox/egress.sock"]);
 * ```
 */
export function relayBind(socket: string): string[] {
  // Read-only is enough: connecting to a socket is not a write to its mount.
  return ["--ro-bind", socket, RELAY_SOCKET];
}

/**
 * The argument that hands the relay its token.
 *
 * @param proxy the open proxy
 * @returns one argument for the relay's process
 * @example
 * ```ts
 * import { relayTokenArg } from "./relay_command.ts";
 * import assert from "node:assert/strict";
 * assert.equal(relayTokenArg({ token: "ab" }), "--skillbox-egress-token=ab");
 * ```
 */
export function relayTokenArg(proxy: Pick<EgressProxy, "token">): string {
  return RELAY_TOKEN_ARG + proxy.token;
}

/**
 * The Deno arguments that run `argv` behind the relay (after the Deno
 * binary): the relay's permissions, `--allow-run` of the command only.
 *
 * @param proxy the open proxy (its token)
 * @param argv the command (first item an absolute path) and its arguments
 * @returns arguments for the Deno binary
 * @example
 * ```ts
 * import { relayDenoArgs } from "./relay_command.ts";
 * import assert from "node:assert/strict";
 * const args = relayDenoArgs({ token: "ab" }, ["/usr/bin/python3", "s.py"]);
 * assert.ok(args.includes("--allow-run=/usr/bin/python3"));
 * assert.deepEqual(args.slice(-3), ["--", "/usr/bin/python3", "s.py"]);
 * ```
 */
export function relayDenoArgs(
  proxy: Pick<EgressProxy, "token">,
  argv: readonly string[],
): string[] {
  const [command, ...args] = argv;
  if (command === undefined) throw new TypeError("The command is empty");
  return [
    "run",
    "--quiet",
    "--no-prompt",
    "--no-lock",
    "--no-config",
    "--no-remote",
    ...relayFlags(),
    `--allow-run=${command}`,
    fileURLToPath(RELAY_MAIN),
    relayTokenArg(proxy),
    "--",
    command,
    ...args,
  ];
}

/** Options of {@link openEgressRelay}. */
export interface EgressRelayOptions {
  /** The host's broker (its private-host rules and resolver). */
  broker: EgressBroker;
  /** Hosts the command may reach (`name`, `name:port`, `*`). */
  hosts: readonly string[];
  /** Who runs it, for messages. @default "sandbox" */
  principal?: string;
  /** The Deno binary the relay runs on. @default Deno.execPath() */
  deno?: string;
}

/** A command set to run behind the relay, and its host-side proxy. */
export interface EgressRelay {
  /** Run this inside the namespace instead of the command. */
  argv: string[];
  /**
   * Bind these read-only (host path `from` at `to` inside): the Deno
   * binary, the relay's files, the proxy socket. The Deno binary's shared
   * libraries must exist inside too (the system folders hold them).
   */
  readOnly: Array<{ from: string; to: string }>;
  /** Add these to the command's environment. */
  env: Record<string, string>;
  /** Stops the proxy; call once the command has exited. */
  close(): void;
}

/**
 * Network for a confined command, only through the egress broker: opens a
 * proxy for the principal's hosts and returns the argv, binds and
 * environment that run the command behind a relay inside its namespace.
 * The namespace must have no network of its own (`--unshare-net`).
 *
 * @param argv the command (first item an absolute path) and its arguments
 * @param options the broker and the hosts
 * @returns what to run, bind and set, and `close`
 * @example A script that may reach one host
 * ```ts
 * import { openEgressRelay } from "./relay_command.ts";
 * import { EgressBroker } from "./broker.ts";
 * import assert from "node:assert/strict";
 * const relay = openEgressRelay(["/usr/bin/python3", "s.py"], {
 *   broker: new EgressBroker(), hosts: ["api.example.com"],
 * });
 * assert.equal(relay.env.HTTPS_PROXY, "http://127.0.0.1:3128");
 * assert.ok(relay.readOnly.some((b) => b.to === "/run/skillbox/egress.sock"));
 * assert.deepEqual(relay.argv.slice(-2), ["/usr/bin/python3", "s.py"]);
 * relay.close();
 * ```
 */
export function openEgressRelay(
  argv: readonly string[],
  options: EgressRelayOptions,
): EgressRelay {
  const proxy = openEgressProxy({
    broker: options.broker,
    allow: options.hosts,
    principal: options.principal,
  });
  const deno = options.deno ?? Deno.execPath();
  return {
    argv: [deno, ...relayDenoArgs(proxy, argv)],
    readOnly: [
      { from: deno, to: deno },
      ...RELAY_FILES.map((f) => ({ from: f, to: f })),
      { from: proxy.path, to: RELAY_SOCKET },
    ],
    // The relay's transpiled sources go to the private /tmp.
    env: { ...relayEnv(), DENO_DIR: "/tmp/.skillbox-relay-deno" },
    close: () => proxy.close(),
  };
}
