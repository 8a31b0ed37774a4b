/**
 * The permission kinds a sandbox can be granted, named once: the author SDK,
 * the host's grant logic and the host↔sandbox pipe all derive from this list.
 *
 * @module
 */

/**
 * Every permission kind, in the order flags and worker options list them.
 *
 * @example List the kinds
 * ```ts
 * import { PERMISSION_KINDS } from "./permissions.ts";
 * import assert from "node:assert/strict";
 * assert.ok(PERMISSION_KINDS.includes("net"));
 * ```
 */
export const PERMISSION_KINDS = [
  "read",
  "write",
  "net",
  "env",
  "run",
  "sys",
  "ffi",
] as const;

/** One permission kind (`"read"`, `"net"`, ...). */
export type PermissionKind = typeof PERMISSION_KINDS[number];

/**
 * What a module needs from the system. Paths are relative to the module's
 * own folder; hosts are `name` or `name:port`. A grant beyond the host
 * policy makes the definition not runnable.
 *
 * @example What discovery reports for a tool's permissions
 * ```ts
 * import type { Permissions } from "./permissions.ts";
 * import { describeExports } from "./describe.ts";
 * import assert from "node:assert/strict";
 * const permissions: Permissions = { read: ["./data"], net: ["api.example.com"] };
 * const mod: Record<string, unknown> = {
 *   default: { kind: "tool", name: "weather", permissions, run: () => null },
 * };
 * const hooks = { zodToJsonSchema: () => null, stringifyObject: String };
 * const [described] = describeExports(Object.keys(mod), (name) => mod[name], hooks);
 * assert.deepEqual(described?.permissions, { read: ["./data"], net: ["api.example.com"] });
 * ```
 */
export interface Permissions {
  /** Paths the code may read. Its own folder is always readable. */
  read?: string[];
  /** Paths the code may write. */
  write?: string[];
  /** Hosts the code may reach (`api.example.com`, `localhost:8080`). */
  net?: string[];
  /** Environment variables the code may read. */
  env?: string[];
  /** Binaries the code may run (the policy must name each). */
  run?: string[];
  /** System information the code may query (`hostname`, `osRelease`, ...). */
  sys?: string[];
  /** Dynamic libraries the code may load (the policy must name each). */
  ffi?: string[];
}
