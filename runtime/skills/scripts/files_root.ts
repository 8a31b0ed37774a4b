/**
 * The session's filesystem-toolkit root inside a skill script's namespace:
 * when the skill declares the filesystem toolkit (or one of its tools) and
 * the session has a root configured, the root is bound at `/files`,
 * read-only, or read-write when the configuration is writable and the skill
 * may use `write_file`. The root is checked against the host policy by the
 * same grant check as a call of the toolkit's tools (`SkillToolHost`'s
 * `toolkitGrant`), and so is its real path when it is a symlink: what is
 * bound is the real folder, so that is what must be granted.
 *
 * @module
 */

import { resolve } from "node:path";
import type { SessionScope } from "../../capability.ts";
import type { SkillToolHost } from "../relays.ts";
import type { Bind } from "./script_process.ts";

/** The toolkit whose root a script sees. */
export const FILES_TOOLKIT = "filesystem";

/** Where the root is mounted inside the script's namespace. */
export const FILES_MOUNT = "/files";

/** The toolkit's tool that writes (a writable mount needs it declared). */
const WRITE_TOOL = "write_file";

/** The root bound into a script's namespace, or why not. */
export type FilesRoot =
  | { bind: Bind }
  | { refused: string };

/**
 * Decides the filesystem mount of one script run.
 *
 * @param allowed the tools the skill declared (see `allowedTools`)
 * @param host the tool host (tool lookup and the session's grant)
 * @param session the session the skill runs for (its configuration only)
 * @returns the bind, why it is refused, or null (not declared, not configured)
 * @example A skill that does not declare the toolkit gets nothing
 * ```ts
 * import { scriptFilesRoot } from "./files_root.ts";
 * import assert from "node:assert/strict";
 * const host = {
 *   tool: () => undefined, toolkit: () => undefined,
 *   call: () => Promise.reject(new Error("unused")),
 *   toolkitGrant: () => Promise.reject(new Error("never asked")),
 * };
 * const session = { id: "s", token: "", state: new Map(), send() {}, signal: new AbortController().signal };
 * assert.equal(await scriptFilesRoot(new Set(["http_request"]), host, session), null);
 * ```
 */
export async function scriptFilesRoot(
  allowed: ReadonlySet<string>,
  host: SkillToolHost,
  session: SessionScope,
): Promise<FilesRoot | null> {
  const ofKit = (name: string) => host.tool(name)?.toolkit === FILES_TOOLKIT;
  if (![...allowed].some(ofKit) || !host.toolkitGrant) return null;
  const found = await host.toolkitGrant(FILES_TOOLKIT, session);
  if (found === null) return null;
  if (!found.ok) return { refused: found.reason };
  const root = found.config.root;
  if (typeof root !== "string" || !root.startsWith("/")) {
    return { refused: '"root" is not an absolute path' };
  }
  let real: string;
  try {
    real = await Deno.realPath(root);
    if (!(await Deno.stat(real)).isDirectory) {
      return { refused: `the root "${root}" is not a directory` };
    }
  } catch {
    return { refused: `the root "${root}" does not exist` };
  }
  let grant = found.grant;
  if (real !== root.replace(/\/+$/, "")) {
    const again = await host.toolkitGrant(FILES_TOOLKIT, session, {
      root: real,
    });
    if (again === null || !again.ok) {
      return {
        refused: `the root "${root}" is a link to "${real}": ${
          again?.ok === false ? again.reason : "not granted"
        }`,
      };
    }
    grant = again.grant;
  }
  const writable = found.config.writable === true && allowed.has(WRITE_TOOL) &&
    ofKit(WRITE_TOOL) &&
    (grant.write ?? []).some((path) => resolve(path) === real);
  return { bind: { from: real, to: FILES_MOUNT, writable } };
}
