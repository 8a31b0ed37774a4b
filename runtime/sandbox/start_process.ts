/**
 * Starting one sandbox process for a grant: its flags (the grant and the
 * policy's denials as Deno permissions), its command wrapped by OS
 * confinement, and the init fields its workers need.
 *
 * @module
 */

import type { Permissions } from "../../protocol/permissions.ts";
import { SandboxProcess } from "./_process.ts";
import { grantToFlags, grantToWorkerPermissions } from "./permissions.ts";
import { type SandboxCommand, sandboxCommand } from "./spawn.ts";
import type { CommandWrapper } from "../confine/sandbox_processes.ts";
import { type DeniedTree, deniedTreePaths } from "./denied_trees.ts";
import { ControlSocket } from "./control_socket.ts";

/** Limits and flags every sandbox process is started with. */
export interface ProcessLimits {
  /** Paths passed as `--deny-read`/`--deny-write` to every process. */
  deny: string[];
  /** Trees whose entries (outside their exceptions) are denied the same way. */
  deniedTrees: DeniedTree[];
  /** Heap cap per process, in MiB. */
  memoryMb: number;
  /** Spare workers per process. */
  spareWorkers: number;
  /** Warm workers per process. */
  maxWarmWorkers: number;
  /** Result bound (characters of JSON). */
  maxResultBytes: number;
  /** Bound on one event or RPC payload. */
  maxEventBytes: number;
  /** Working folder of sandbox processes. */
  cwd: string;
}

/** No wrapping: the process runs unconfined. */
export const UNWRAPPED: CommandWrapper = (command: SandboxCommand) => command;

/**
 * Starts a sandbox process.
 *
 * @param limits flags and limits of every process
 * @param key the routing key it is started under
 * @param grant its grant
 * @param bootstrap the worker bootstrap (JavaScript)
 * @param wrap confinement's wrapper of the command
 * @returns the process, starting
 * @example Start one and stop it
 * ```ts
 * import { startProcess, UNWRAPPED } from "./start_process.ts";
 * import { loadBootstrap } from "./spawn.ts";
 * const proc = startProcess({ deny: [], deniedTrees: [], memoryMb: 128,
 *   spareWorkers: 0, maxWarmWorkers: 2, maxResultBytes: 1 << 20,
 *   maxEventBytes: 1 << 20, cwd: Deno.cwd() }, "k", {}, await loadBootstrap(),
 *   UNWRAPPED);
 * await proc.ready;
 * proc.kill();
 * await proc.exited;
 * ```
 */
export function startProcess(
  limits: ProcessLimits,
  key: string,
  grant: Permissions,
  bootstrap: string,
  wrap: CommandWrapper,
): SandboxProcess {
  // Made first: the command names it (and binds it in when confined).
  const control = openControlSocket();
  try {
    return new SandboxProcess({
      key,
      command: wrap(
        sandboxCommand({
          // Listed at each start: what the tree holds now is denied too.
          flags: grantToFlags(grant, [
            ...limits.deny,
            ...deniedTreePaths(limits.deniedTrees),
          ]),
          grant,
          memoryMb: limits.memoryMb,
          cwd: limits.cwd,
          controlSocket: control?.path,
        }),
        grant,
      ),
      permissions: grantToWorkerPermissions(grant),
      bootstrap,
      spares: limits.spareWorkers,
      maxWarmWorkers: limits.maxWarmWorkers,
      maxResultBytes: limits.maxResultBytes,
      maxEventBytes: limits.maxEventBytes,
      control: control ?? undefined,
    });
  } catch (err) {
    control?.close();
    throw err;
  }
}

/**
 * A control socket for a new process, or null where none can be made (no
 * Unix sockets on the platform, or a socket path too long for it): the
 * process then reads every frame on stdin, as the host and the process both
 * still can, only slower.
 *
 * @returns the socket, or null
 * @example
 * ```ts
 * import { openControlSocket } from "./start_process.ts";
 * const control = openControlSocket();
 * control?.close();
 * ```
 */
export function openControlSocket(): ControlSocket | null {
  try {
    return new ControlSocket();
  } catch {
    return null;
  }
}
