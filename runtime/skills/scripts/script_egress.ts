/**
 * A script's network, when its skill's `net` hosts are granted: the script
 * runs behind the egress relay inside its namespace (still with no network
 * of its own), its HTTP clients sent to the relay by `HTTP_PROXY`, and the
 * relay's proxy on the host lets through only the granted hosts, under the
 * broker's address rules. The memory cap moves from the namespace to the
 * script itself (`prlimit` inside), since the relay runs on Deno, which
 * reserves more address space than it uses.
 *
 * @module
 */

import { RELAY_SOCKET } from "../../../protocol/egress_relay.ts";
import type { EgressBroker } from "../../egress/broker.ts";
import { openEgressRelay, RELAY_FILES } from "../../egress/relay_command.ts";
import { dirname, join, relative, sep } from "node:path";
import { PRLIMIT } from "./confined.ts";

/** Where the relay's source files are inside a script's namespace. */
export const RELAY_DIR = "/run/skillbox/relay";

/** A script's command set up behind the relay. */
export interface ScriptRelay {
  /** What runs in the namespace (the relay on the Deno binary). */
  argv: string[];
  /** Variables added to the script's environment (the proxy's address). */
  env: Record<string, string>;
  /** The proxy socket and the program the relay runs (`ConfinedSpec.relay`). */
  relay: { socket: string; runs: string };
  /**
   * The relay's source files, bound read-only under {@link RELAY_DIR}:
   * at their own paths they could sit under a script's `/work`.
   */
  binds: { from: string; to: string }[];
  /** Stops the proxy; call once the script has ended. */
  close(): void;
}

/**
 * Sets a script's command up behind the egress relay.
 *
 * @param argv the script's command (first item an absolute path)
 * @param options the broker, the granted hosts, the Deno binary, the
 *   script's memory cap (0: none) and who runs it (for messages)
 * @returns the command, environment and binds, and `close`
 * @example
 * ```ts
 * import { scriptRelay } from "./script_egress.ts";
 * import { EgressBroker } from "../../egress/broker.ts";
 * import assert from "node:assert/strict";
 * const relay = scriptRelay(["/usr/bin/python3", "/skill/a.py"], {
 *   broker: new EgressBroker(), hosts: ["api.example.com"], deno: Deno.execPath(),
 *   memoryBytes: 1 << 28, principal: "a.py",
 * });
 * assert.equal(relay.env.HTTPS_PROXY, "http://127.0.0.1:3128");
 * assert.equal(relay.relay.runs, "/usr/bin/prlimit");
 * assert.deepEqual(relay.argv.slice(-5), ["/usr/bin/prlimit", "--as=268435456", "--", "/usr/bin/python3", "/skill/a.py"]);
 * assert.ok(relay.binds.every((b) => b.to.startsWith("/run/skillbox/relay/")));
 * assert.ok(relay.argv.includes("/run/skillbox/relay/sandbox/process/relay_main.ts"));
 * relay.close();
 * ```
 */
export function scriptRelay(
  argv: readonly string[],
  options: {
    broker: EgressBroker;
    hosts: readonly string[];
    deno: string;
    memoryBytes: number;
    principal: string;
  },
): ScriptRelay {
  const inner = options.memoryBytes > 0
    ? [PRLIMIT, `--as=${Math.floor(options.memoryBytes)}`, "--", ...argv]
    : [...argv];
  const relay = openEgressRelay(inner, {
    broker: options.broker,
    hosts: options.hosts,
    principal: options.principal,
    deno: options.deno,
  });
  // Their folder tree kept (the relay's imports are relative).
  const top = commonFolder(RELAY_FILES);
  const moved = new Map(
    RELAY_FILES.map((f) => [f, join(RELAY_DIR, relative(top, f))]),
  );
  return {
    argv: relay.argv.map((arg) => moved.get(arg) ?? arg),
    env: relay.env,
    relay: {
      socket: relay.readOnly.find((b) => b.to === RELAY_SOCKET)!.from,
      runs: inner[0]!,
    },
    binds: [...moved].map(([from, to]) => ({ from, to })),
    close: () => relay.close(),
  };
}

// The deepest folder holding every file.
function commonFolder(files: readonly string[]): string {
  let top = dirname(files[0]!);
  while (!files.every((f) => f.startsWith(top + sep)) && top !== sep) {
    top = dirname(top);
  }
  return top;
}
