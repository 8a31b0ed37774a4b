/**
 * Runs a script in a confined sandbox-like process, for the adversarial
 * tests of the OS layer: the script gets every Deno permission (as if the
 * inner layer were bypassed), so only the confinement stands in its way.
 *
 * @module
 */

import { join } from "node:path";
import {
  type ConfinementMode,
  type ConfinementStatus,
  detectConfinement,
} from "../../runtime/confine/confine.ts";
import { confineArgs } from "../../runtime/confine/confine.ts";
import type { Permissions } from "../../protocol/permissions.ts";

/**
 * The mode the adversarial suite runs in: `SKILLBOX_TEST_CONFINEMENT=off`
 * runs it with Deno's permissions alone (the tests that need confinement
 * are then ignored, saying so).
 */
export const CONFINEMENT_MODE: ConfinementMode =
  Deno.env.get("SKILLBOX_TEST_CONFINEMENT") === "off" ? "off" : "auto";

/** Confinement as detected on this machine (once). */
export const confinement: ConfinementStatus = await detectConfinement(
  CONFINEMENT_MODE,
);

/** Why a test that needs confinement is ignored, or "" when it runs. */
export const NEEDS_CONFINEMENT: string = confinement.active
  ? ""
  : ` (ignored: needs OS confinement; ${confinement.reason})`;

/** What a confined script printed. */
export interface ConfinedRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options for {@link runConfined}. */
export interface RunConfinedOptions {
  grant?: Permissions;
  env?: Record<string, string>;
  /** Extra Deno flags. @default ["--allow-all"] */
  flags?: string[];
  /**
   * A host file the spawner holds open as fd 9, without close-on-exec, when
   * it starts the confined command: as a host started by a careless parent
   * holds what it inherited. @default none
   */
  heldOpen?: string;
}

/**
 * Writes `source` to a module in its own temp folder and starts it confined,
 * with the folder as a read grant on top of `grant`.
 */
export async function spawnConfined(
  source: string,
  options: RunConfinedOptions = {},
): Promise<{ child: Deno.ChildProcess; cleanup: () => Promise<void> }> {
  if (!confinement.layout) throw new Error(confinement.reason);
  const dir = await Deno.makeTempDir({ prefix: "confined_mod_" });
  const main = join(dir, "main.ts");
  await Deno.writeTextFile(main, source);
  const grant = options.grant ?? {};
  const cmd = confineArgs(confinement.layout, {
    grant: { ...grant, read: [dir, ...(grant.read ?? [])] },
    runtimeFiles: [],
    args: [
      "run",
      "--quiet",
      "--no-lock",
      "--no-remote",
      "--cached-only",
      ...(options.flags ?? ["--allow-all"]),
      main,
    ],
    env: options.env ?? {},
  });
  const held = options.heldOpen;
  const child = new Deno.Command(held ? "/bin/bash" : cmd.command, {
    args: held
      ? ["-c", 'exec 9<"$0"; exec "$@"', held, cmd.command, ...cmd.args]
      : cmd.args,
    env: cmd.env,
    clearEnv: true,
    cwd: cmd.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return {
    child,
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}

/** Runs `source` confined (see {@link spawnConfined}) until it exits. */
export async function runConfined(
  source: string,
  options: RunConfinedOptions = {},
): Promise<ConfinedRun> {
  const { child, cleanup } = await spawnConfined(source, options);
  try {
    const out = await child.output();
    const decoder = new TextDecoder();
    return {
      code: out.code,
      stdout: decoder.decode(out.stdout),
      stderr: decoder.decode(out.stderr),
    };
  } finally {
    await cleanup();
  }
}
