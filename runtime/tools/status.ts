/**
 * Every tool's status for the operator, like skills have: `available`, or
 * `blocked` with why (the host policy's tool rules deny it, or it asks for
 * more than the permission cap grants). Clients never see this: a session's
 * `tool/list` keeps hiding what it may not call; the operator's catalog
 * shows everything the rules decided, with the registry's refusals.
 *
 * @module
 */

import { dirname } from "node:path";
import {
  checkGrant,
  mergePermissions,
  type Policy,
  resolvePermissionPaths,
} from "../sandbox/grants.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import type { RegistrySnapshot, ToolEntry } from "../registry/types.ts";
import { checkToolPolicy, type ToolPolicyConfig } from "./policy.ts";

/** A tool as the operator's catalog shows it. */
export interface ToolStatus {
  readonly name: string;
  readonly description: string;
  readonly toolkit: string | null;
  readonly tags: readonly string[];
  readonly origin: string;
  /** Absolute path of its module. */
  readonly path: string;
  readonly status: "available" | "blocked";
  /** Why it is blocked; null when available. */
  readonly blockedReason: string | null;
}

/**
 * The status of every served tool under the host's rules for a session
 * without a token: the global tool rules, then the permission cap. A tool
 * or toolkit whose permissions come from configuration is available here
 * (its grant is checked per call, against the session's configuration).
 *
 * @param snapshot the registry's snapshot
 * @param rules the policy's tool rules and permission cap
 * @returns one status per tool, sorted by name
 * @example A tool the policy denies
 * ```ts
 * import { toolStatuses } from "./status.ts";
 * import { buildSnapshot } from "../registry/normalize.ts";
 * import assert from "node:assert/strict";
 * const snapshot = buildSnapshot([{ origin: "file", root: "/s", module: {
 *   path: "/s/sh.ts", hash: "h", error: null,
 *   definitions: [{ export: "default", kind: "tool", name: "sh",
 *     fields: {}, permissions: { run: ["bash"] }, runnable: true }] } }]);
 * const [sh] = toolStatuses(snapshot, {
 *   tools: { allow: [], deny: [], tokens: {} }, permissions: {},
 * });
 * assert.equal(sh?.status, "blocked");
 * assert.match(sh?.blockedReason ?? "", /run/);
 * ```
 */
export function toolStatuses(
  snapshot: Pick<RegistrySnapshot, "tools" | "toolkits">,
  rules: { tools: ToolPolicyConfig; permissions: Policy },
): ToolStatus[] {
  return [...snapshot.tools.values()].map((entry): ToolStatus => {
    const reason = policyReason(entry, rules.tools) ??
      grantReason(entry, snapshot, rules.permissions);
    return {
      name: entry.name,
      description: entry.description,
      toolkit: entry.toolkit,
      tags: entry.tags,
      origin: entry.origin,
      path: entry.path,
      status: reason === null ? "available" : "blocked",
      blockedReason: reason,
    };
  }).sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

function policyReason(entry: ToolEntry, rules: ToolPolicyConfig) {
  const decision = checkToolPolicy(rules, entry, "");
  return decision.allowed ? null : decision.reason;
}

// The static part of the grant a call would ask for: the tool's own
// permissions plus its toolkit's, each relative to its module's folder.
function grantReason(
  entry: ToolEntry,
  snapshot: Pick<RegistrySnapshot, "toolkits">,
  policy: Policy,
): string | null {
  const kit = entry.toolkit === null
    ? undefined
    : snapshot.toolkits.get(entry.toolkit);
  const own = staticOf(entry);
  const fromKit = kit ? staticOf(kit) : {};
  if (own === null || fromKit === null) return null;
  const check = checkGrant(mergePermissions(own, fromKit), {
    modulePath: entry.path,
    policy,
  });
  return check.ok
    ? null
    : `Tool "${entry.name}" asks for more than the host policy grants: ${check.reason}`;
}

function staticOf(
  owner: { path: string; permissions: Permissions | "dynamic" },
): Permissions | null {
  return owner.permissions === "dynamic"
    ? null
    : resolvePermissionPaths(owner.permissions, dirname(owner.path));
}
