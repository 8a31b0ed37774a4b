/**
 * What the pool uses to confine its processes: detection once per host (per
 * mode), and for each sandbox main script (call processes, discovery
 * processes) a wrapper that turns its unconfined command into the bwrap one,
 * with the script and its local imports bound read-only.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import type { Permissions } from "../../protocol/permissions.ts";
import {
  confineCommand,
  type ConfinementMode,
  type ConfinementStatus,
  detectConfinement,
  type ProcessCommand,
} from "./confinement.ts";
import { moduleGraph } from "./module_graph.ts";
import { prepareSandboxCache } from "./confinement_cache.ts";
import { EgressBroker } from "../egress/broker.ts";
import { openEgressProxy } from "../egress/proxy.ts";
import {
  relayEnv,
  relayFlags,
  relayTokenArg,
} from "../egress/relay_command.ts";

/** Turns a process's unconfined command into the one to spawn. */
export type CommandWrapper = (
  command: ProcessCommand,
  grant: Permissions,
) => ProcessCommand;

// Detection runs a process: once per mode for the whole host, not per pool.
const detections = new Map<ConfinementMode, Promise<ConfinementStatus>>();
// The sandbox cache is filled once per main script for the whole host.
const caches = new Map<string, Promise<string | undefined>>();

/**
 * Confinement for one pool.
 *
 * @example Off: commands pass through unchanged
 * ```ts
 * import { Confiner } from "./confiner.ts";
 * import assert from "node:assert/strict";
 * const confiner = new Confiner("off");
 * const wrap = await confiner.wrapperFor(new URL("./confiner.ts", import.meta.url));
 * const cmd = { program: "deno", args: ["run", "x.ts"], env: {}, cwd: "/" };
 * assert.equal(wrap(cmd, {}), cmd);
 * ```
 */
export class Confiner {
  /** The configured mode. */
  readonly mode: ConfinementMode;
  readonly #wrappers = new Map<string, Promise<CommandWrapper>>();
  readonly #egress: EgressBroker;

  /**
   * @param mode `sandbox.confinement`
   * @param egress the broker whose rules a confined process's network
   * follows @default a broker with no private hosts allowed
   */
  constructor(mode: ConfinementMode, egress?: EgressBroker) {
    this.mode = mode;
    this.#egress = egress ?? new EgressBroker();
  }

  /**
   * Whether processes are confined, and why not when they are not.
   *
   * @throws {SkillboxError} (rejects) when the mode is `"required"` and
   * confinement does not work
   */
  status(): Promise<ConfinementStatus> {
    let found = detections.get(this.mode);
    if (!found) {
      found = detectConfinement(this.mode);
      detections.set(this.mode, found);
      // A failure is reported to every caller; never as unhandled.
      found.catch(() => {});
    }
    return found;
  }

  /**
   * The wrapper for processes running `main`: synchronous once prepared, so
   * starting a process costs no extra await.
   *
   * @param main the sandbox main script
   * @returns the wrapper (identity when not confined)
   */
  wrapperFor(main: URL): Promise<CommandWrapper> {
    let wrapper = this.#wrappers.get(main.href);
    if (!wrapper) {
      wrapper = this.#prepare(main);
      this.#wrappers.set(main.href, wrapper);
      wrapper.catch(() => this.#wrappers.delete(main.href));
    }
    return wrapper;
  }

  async #prepare(main: URL): Promise<CommandWrapper> {
    const status = await this.status();
    const layout = status.layout;
    if (!layout) return (command) => command;
    // The script and its local imports are all the host code that exists
    // inside; a main loaded from a URL comes from Deno's remote cache.
    const mainArg = main.protocol === "file:" ? fileURLToPath(main) : main.href;
    const runtimeFiles = main.protocol === "file:"
      ? (await moduleGraph(fileURLToPath(main))).files
      : [];
    let cache = caches.get(main.href);
    if (!cache) {
      cache = prepareSandboxCache({
        execPath: layout.execPath,
        denoDir: layout.denoDir,
        mains: [main],
        // Without it (no writable cache folder) processes start colder:
        // only the host cache's npm and remote folders, as before.
      }).catch(() => undefined);
      caches.set(main.href, cache);
    }
    const cacheDir = await cache;
    return (command, grant) => {
      const hosts = grant.net ?? [];
      if (hosts.length === 0) {
        return confineCommand(command, {
          layout,
          grant,
          runtimeFiles,
          cacheDir,
        });
      }
      return this.#withEgress(
        command,
        grant,
        mainArg,
        (egressSocket) =>
          confineCommand(command, {
            layout,
            grant,
            runtimeFiles,
            cacheDir,
            egressSocket,
          }),
      );
    };
  }

  /**
   * A process whose grant names hosts: its own proxy socket (checked
   * against exactly those hosts), its relay's flags around the main script
   * (`main`, the argument naming it), `HTTP(S)_PROXY` naming the relay, and
   * the socket closed when the process exits.
   */
  #withEgress(
    command: ProcessCommand,
    grant: Permissions,
    main: string,
    confine: (egressSocket: string) => ProcessCommand,
  ): ProcessCommand {
    const proxy = openEgressProxy({
      broker: this.#egress,
      allow: grant.net ?? [],
    });
    try {
      const confined = confine(proxy.path);
      // The relay's flags go before the main script, its token after.
      const at = confined.args.lastIndexOf(main);
      const flags = relayFlags(command.args);
      confined.args.splice(at, 1, ...flags, main, relayTokenArg(proxy));
      return {
        ...confined,
        env: { ...confined.env, ...relayEnv() },
        release: () => proxy.close(),
      };
    } catch (err) {
      proxy.close();
      throw err;
    }
  }
}
