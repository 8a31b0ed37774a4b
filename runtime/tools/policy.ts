/**
 * The tools policy: which tools a session may list and call (by tool name,
 * tag, toolkit or origin, globally and per auth token), the permission cap
 * handed to the sandbox, and the longest timeout a call may ask for.
 *
 * In `skillbox.jsonc`:
 *
 * ```jsonc
 * "policy": {
 *   "tools": {
 *     // Selectors: a tool name ("read_file", "*" globs allowed),
 *     // "tag:<tag>", "toolkit:<name>" or "origin:<builtin|file|mcp>".
 *     "allow": [],                  // empty = every tool not denied
 *     "deny": ["toolkit:shell"],
 *     "tokens": {
 *       // Rules for sessions that authenticated with this token. A match
 *       // here decides before the global rules: "allow" can open what the
 *       // global "deny" closed, and a non-empty "allow" list limits the
 *       // token to what it names.
 *       "admin-token": { "allow": ["toolkit:shell"] },
 *       "ci-token": { "allow": ["tag:read-only"], "deny": ["http_request"] }
 *     }
 *   },
 *   "permissions": {                // the most a grant may hold
 *     "read": ["/data"], "write": [], "net": ["api.example.com"],
 *     "env": [], "run": ["git"], "sys": [], "ffi": [],
 *     "deny": [], "shared_folders": []
 *   },
 *   "max_timeout_seconds": 300      // caps tool/call/req.timeout
 * }
 * ```
 *
 * Order: token `only`, token `deny`, token `allow`, global `deny`, global
 * `allow` (a non-empty global `allow` admits only what it names). Denied
 * tools are left out of `tool/list` for that session.
 *
 * The operator sees every tool's status under the policy, as skills have
 * one ({@link toolStatuses}): `available`, or `blocked` with why (the tool
 * rules deny it, or it asks for more than the permission cap grants).
 * Clients never see this: a session's `tool/list` keeps hiding what it may
 * not call.
 *
 * @module
 */

import { z } from "zod";
import { type Policy, staticGrant } from "../sandbox/grants.ts";
import type { RegistrySnapshot, ToolEntry } from "../registry/types.ts";
import { describeZodError } from "../../protocol/request_schemas.ts";
import { compareCodeUnits } from "./filter.ts";

/** The whole `policy` section as the tools capability uses it. */
export interface HostPolicy {
  tools: ToolPolicyConfig;
  /** The permission cap passed to the sandbox's grant check. */
  permissions: Policy;
  /** The longest wall-clock time a call may run. @default 300000 */
  maxTimeoutMs: number;
}

/** What the policy needs to know about a tool. */
export interface PolicySubject {
  readonly name: string;
  readonly tags: readonly string[];
  readonly toolkit: string | null;
  readonly origin: string;
}

/** The policy's answer. */
export type PolicyDecision = { allowed: true } | {
  allowed: false;
  /** Sentence naming the tool and the rule, never the token. */
  reason: string;
};

// The types below are the schemas' output: one place for their shape.
const list = z.array(z.string()).default([]);
// A token's `allow` opens a tool for it even if globally denied, `deny`
// closes one, and a non-empty `only` limits it to what matches one.
const Rules = z.strictObject({ allow: list, deny: list, only: list });
const ToolRules = z.strictObject({
  /** Selectors a tool must match one of; empty means any. */
  allow: list,
  /** Selectors that refuse a tool; they beat `allow`. */
  deny: list,
  /** Rules per auth token, applied before the global ones. */
  tokens: z.record(z.string(), Rules).default({}),
});

/** The `policy.tools` section, defaults applied. */
export type ToolPolicyConfig = z.output<typeof ToolRules>;

const Section = z.object({
  tools: ToolRules.prefault({}),
  permissions: z.strictObject({
    read: list,
    write: list,
    net: list,
    env: list,
    run: list,
    sys: list,
    ffi: list,
    deny: list,
    shared_folders: list,
  }).prefault({}),
  // Deno fires a timer longer than 2^31-1 ms after 1 ms.
  max_timeout_seconds: z.number().positive().max(2_147_483).default(300),
});

/**
 * Parses the `policy` section of the host config (other keys in it are left
 * to their owners).
 *
 * @param raw `config.policy` as written, or undefined
 * @returns the policy with every default applied
 * @throws {TypeError} naming the field path when the section is malformed
 * @example Parse a policy
 * ```ts
 * import { parseHostPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const p = parseHostPolicy({ tools: { deny: ["tag:network"] }, max_timeout_seconds: 5 });
 * assert.deepEqual(p.tools.deny, ["tag:network"]);
 * assert.equal(p.maxTimeoutMs, 5000);
 * assert.deepEqual(p.permissions.net, []);
 * assert.throws(() => parseHostPolicy({ tools: { allow: "x" } }), /policy\.tools\.allow/);
 * ```
 */
export function parseHostPolicy(raw: unknown): HostPolicy {
  const parsed = Section.safeParse(raw ?? {});
  if (!parsed.success) {
    const detail = describeZodError(parsed.error).replace(
      /(^|; )(?!\(root\))/g,
      "$1policy.",
    );
    throw new TypeError(`Invalid host policy: ${detail}`);
  }
  const { tools, permissions, max_timeout_seconds } = parsed.data;
  const { shared_folders, ...paths } = permissions;
  return {
    tools,
    permissions: { ...paths, sharedFolders: shared_folders },
    maxTimeoutMs: Math.round(max_timeout_seconds * 1000),
  };
}

/**
 * Tells whether a tool matches a selector: a name (with `*` globs),
 * `tag:<tag>`, `toolkit:<name>` or `origin:<origin>`.
 *
 * @param selector the selector as written in the policy
 * @param tool the tool
 * @returns true on a match
 * @example
 * ```ts
 * import { matchesSelector } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const tool = { name: "read_file", tags: ["files"], toolkit: "filesystem", origin: "builtin" };
 * assert.ok(matchesSelector("read_*", tool));
 * assert.ok(matchesSelector("tag:files", tool));
 * assert.ok(matchesSelector("toolkit:filesystem", tool));
 * assert.ok(!matchesSelector("origin:file", tool));
 * ```
 */
export function matchesSelector(
  selector: string,
  tool: PolicySubject,
): boolean {
  const colon = selector.indexOf(":");
  const prefix = colon > 0 ? selector.slice(0, colon) : "";
  const value = selector.slice(colon + 1);
  switch (prefix) {
    case "tag":
      return tool.tags.includes(value);
    case "toolkit":
      return tool.toolkit !== null && glob(value).test(tool.toolkit);
    case "origin":
      return tool.origin === value;
    default:
      return glob(selector).test(tool.name);
  }
}

/**
 * Decides whether a session may list and call a tool (see the module doc for
 * the rules).
 *
 * @param policy the `policy.tools` section
 * @param tool the tool
 * @param token the session's auth token (`""` when none)
 * @returns allowed, or the reason (which never quotes the token)
 * @example A token opens a toolkit the global rules deny
 * ```ts
 * import { checkToolPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const policy = { allow: [], deny: ["toolkit:shell"], tokens: { t1: { allow: ["toolkit:shell"], deny: [], only: [] } } };
 * const tool = { name: "run_command", tags: [], toolkit: "shell", origin: "builtin" };
 * assert.equal(checkToolPolicy(policy, tool, "t1").allowed, true);
 * const other = checkToolPolicy(policy, tool, "");
 * assert.ok(!other.allowed && other.reason.includes('"toolkit:shell"'));
 * ```
 */
export function checkToolPolicy(
  policy: ToolPolicyConfig,
  tool: PolicySubject,
  token: string,
): PolicyDecision {
  const own = token !== "" && Object.hasOwn(policy.tokens, token)
    ? policy.tokens[token]
    : undefined;
  if (own) {
    if (
      own.only.length > 0 && !own.only.some((s) => matchesSelector(s, tool))
    ) {
      return refuse(tool, `the "only" list for this auth token`);
    }
    const denied = own.deny.find((s) => matchesSelector(s, tool));
    if (denied !== undefined) {
      return refuse(tool, `rule "${denied}" for this auth token`);
    }
    if (own.allow.some((s) => matchesSelector(s, tool))) {
      return { allowed: true };
    }
  }
  const denied = policy.deny.find((s) => matchesSelector(s, tool));
  if (denied !== undefined) return refuse(tool, `rule "${denied}"`);
  if (
    policy.allow.length > 0 &&
    !policy.allow.some((s) => matchesSelector(s, tool))
  ) {
    return refuse(tool, "the allow list");
  }
  return { allowed: true };
}

function refuse(tool: PolicySubject, what: string): PolicyDecision {
  return {
    allowed: false,
    reason: `Tool "${tool.name}" is denied by the host policy: ${what}`,
  };
}

const globs = new Map<string, RegExp>();

function glob(pattern: string): RegExp {
  let re = globs.get(pattern);
  if (!re) {
    const body = pattern.split("*").map((part) =>
      part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")
    ).join(".*");
    re = new RegExp(`^${body}$`);
    if (globs.size < 1024) globs.set(pattern, re);
  }
  return re;
}

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
 * import { toolStatuses } from "./policy.ts";
 * import { buildSnapshot } from "../registry/snapshot.ts";
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
    const decision = checkToolPolicy(rules.tools, entry, "");
    const reason = decision.allowed
      ? grantReason(entry, snapshot, rules.permissions)
      : decision.reason;
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
  }).sort((a, b) => compareCodeUnits(a.name, b.name));
}

// Why the grant a call would ask for is refused, or null. One from
// configuration (dynamic) is checked per call, against the session's.
function grantReason(
  entry: ToolEntry,
  snapshot: Pick<RegistrySnapshot, "toolkits">,
  policy: Policy,
): string | null {
  const kit = entry.toolkit === null
    ? undefined
    : snapshot.toolkits.get(entry.toolkit);
  const check = staticGrant(entry, kit, policy);
  return check === null || check.ok
    ? null
    : `Tool "${entry.name}" asks for more than the host policy grants: ${check.reason}`;
}
