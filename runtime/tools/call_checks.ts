/**
 * The checks of one tool call before its code runs, in the order the call
 * makes them: the tool is served and the policy lets the session use it;
 * its arguments fit its input schema; its toolkit is configured; its grant
 * could be computed and the policy allows it. Each either lets the call go
 * on or says why not: a thrown A2E error (the dispatcher answers `error`)
 * or a failed result. Plain functions, allocating only on refusal, so the
 * hot path pays for none of them when a call goes through.
 *
 * @module
 */

import type { GrantCheck } from "../sandbox/grants.ts";
import { PermissionDeniedError, SkillboxError } from "../../protocol/errors.ts";
import type {
  RegistrySnapshot,
  ToolEntry,
  ToolkitEntry,
} from "../registry/types.ts";
import type { ResolvedConfig } from "../toolkits/configs.ts";
import { checkToolPolicy, type HostPolicy } from "./policy.ts";
import { validateArguments } from "./validate.ts";
import {
  failure,
  NO_SECRETS,
  scrub,
  type ToolCallOutcome,
} from "./call_outcome.ts";

/**
 * The served tool a session may call by that name.
 *
 * @param snapshot the registry's snapshot the call reads
 * @param tools the host policy's tool rules
 * @param name the tool's name
 * @param token the session's token (the policy may depend on it)
 * @returns the tool's entry
 * @throws {SkillboxError} `unknown_tool` when no such tool is served (with
 *   why, when its name is blocked)
 * @throws {PermissionDeniedError} `tool_denied` when the policy refuses it
 * @example An unknown tool
 * ```ts
 * import { admitTool } from "./call_checks.ts";
 * import { buildSnapshot } from "../registry/normalize.ts";
 * import { parseHostPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const snapshot = buildSnapshot([]);
 * const { tools } = parseHostPolicy({});
 * assert.throws(() => admitTool(snapshot, tools, "nope", ""), { code: "unknown_tool" });
 * ```
 */
export function admitTool(
  snapshot: Pick<RegistrySnapshot, "tools" | "blocked" | "toolkits">,
  tools: HostPolicy["tools"],
  name: string,
  token: string,
): ToolEntry {
  const entry = snapshot.tools.get(name);
  if (!entry) {
    const why = snapshot.blocked.get(name) ?? serverDown(snapshot, name);
    throw new SkillboxError(
      "unknown_tool",
      why ? `Unknown tool "${name}": ${why}` : `Unknown tool "${name}"`,
      { detail: { tool_name: name } },
    );
  }
  const decision = checkToolPolicy(tools, entry, token);
  if (!decision.allowed) {
    throw new PermissionDeniedError(decision.reason, {
      detail: { tool_name: name },
    });
  }
  return entry;
}

// An imported server's tools are listed once it is up: a call naming one
// while its server is starting or down says so, from its toolkit's entry
// (`<server>__<tool>`, tagged "unavailable" with the reason).
function serverDown(
  snapshot: Pick<RegistrySnapshot, "toolkits">,
  name: string,
): string | undefined {
  const cut = name.indexOf("__");
  if (cut <= 0) return undefined;
  const kit = snapshot.toolkits.get(name.slice(0, cut));
  if (!kit?.tags.includes("mcp") || !kit.tags.includes("unavailable")) {
    return undefined;
  }
  const reason = /\(unavailable: (.*)\)/.exec(kit.description)?.[1];
  return `its MCP server "${kit.name}" is unavailable${
    reason ? ` (${reason})` : ""
  }; its tools are listed once it is up`;
}

/**
 * Why the arguments cannot go to the tool, or null when they fit its input
 * schema.
 *
 * @param entry the tool
 * @param args the call's arguments
 * @param started when the call started (`performance.now()`)
 * @returns null, or a failed result: `schema_violation` for bad arguments,
 *   `tool_error` when the tool's own schema does not compile
 * @example Missing a required argument
 * ```ts
 * import { argumentsRefusal } from "./call_checks.ts";
 * import type { ToolEntry } from "../registry/types.ts";
 * import assert from "node:assert/strict";
 * const entry = { name: "add", inputSchema: { type: "object", required: ["a"] } } as unknown as ToolEntry;
 * assert.equal(argumentsRefusal(entry, { a: 1 }, performance.now()), null);
 * assert.equal(argumentsRefusal(entry, {}, performance.now())?.result.errorCode, "schema_violation");
 * ```
 */
export function argumentsRefusal(
  entry: ToolEntry,
  args: Record<string, unknown>,
  started: number,
): ToolCallOutcome | null {
  let check;
  try {
    check = validateArguments(entry.inputSchema, args);
  } catch (error) {
    return failure(
      entry,
      "tool_error",
      `Cannot run tool "${entry.name}": its input schema is invalid: ${
        (error as Error).message
      }`,
      NO_SECRETS,
      started,
    );
  }
  if (check.valid) return null;
  return failure(
    entry,
    "schema_violation",
    `Invalid arguments for tool "${entry.name}": ${check.message}`,
    NO_SECRETS,
    started,
  );
}

/**
 * The refusal of a call whose toolkit configuration has a problem (not
 * configured yet, or invalid). Call it only when `resolved.problem` is set.
 *
 * @param entry the tool
 * @param kit its toolkit
 * @param resolved the session's configuration of the toolkit
 * @param started when the call started (`performance.now()`)
 * @returns a failed result (`tool_error`), scrubbed of the secrets
 * @example Not configured yet
 * ```ts
 * import { configRefusal } from "./call_checks.ts";
 * import type { ToolEntry, ToolkitEntry } from "../registry/types.ts";
 * import assert from "node:assert/strict";
 * const out = configRefusal({ name: "peek" } as ToolEntry, { name: "kit" } as ToolkitEntry,
 *   { configured: false, config: {}, problem: "root is required", secrets: [] }, performance.now());
 * assert.match(out.result.error ?? "", /send toolkit\/configure\/req first/);
 * ```
 */
export function configRefusal(
  entry: ToolEntry,
  kit: ToolkitEntry,
  resolved: ResolvedConfig,
  started: number,
): ToolCallOutcome {
  return failure(
    entry,
    "tool_error",
    resolved.configured
      ? `Cannot run tool "${entry.name}": the configuration of toolkit "${kit.name}" is invalid: ${resolved.problem}`
      : `Cannot run tool "${entry.name}": toolkit "${kit.name}" is not configured (${resolved.problem}); send toolkit/configure/req first`,
    resolved.secrets,
    started,
  );
}

/**
 * The refusal of a call whose grant could not be computed (a toolkit's
 * dynamic permissions threw, or their sandbox failed).
 *
 * @param entry the tool
 * @param error what computing the grant threw
 * @param secrets the toolkit's secret values
 * @param started when the call started (`performance.now()`)
 * @returns a failed result: the error's own code, else `tool_error`
 * @example A toolkit whose dynamic permissions threw
 * ```ts
 * import { grantRefusal } from "./call_checks.ts";
 * import type { ToolEntry } from "../registry/types.ts";
 * import assert from "node:assert/strict";
 * const out = grantRefusal({ name: "peek" } as ToolEntry, new Error("boom"), [], performance.now());
 * assert.equal(out.result.errorCode, "tool_error");
 * ```
 */
export function grantRefusal(
  entry: ToolEntry,
  error: unknown,
  secrets: readonly string[],
  started: number,
): ToolCallOutcome {
  return failure(
    entry,
    error instanceof SkillboxError ? error.code : "tool_error",
    `Cannot run tool "${entry.name}": its permissions could not be computed: ${
      (error as Error).message
    }`,
    secrets,
    started,
  );
}

/**
 * The error a call whose grant the policy refuses throws.
 *
 * @param name the tool's name
 * @param grant the refused check
 * @param secrets the toolkit's secret values (scrubbed from the message)
 * @returns the `tool_denied` error, naming the permission
 * @example A refused read
 * ```ts
 * import { grantDenied } from "./call_checks.ts";
 * import assert from "node:assert/strict";
 * const error = grantDenied("peek", { ok: false, permission: "read", value: "/etc", reason: "No" }, []);
 * assert.equal(error.code, "tool_denied");
 * ```
 */
export function grantDenied(
  name: string,
  grant: Extract<GrantCheck, { ok: false }>,
  secrets: readonly string[],
): PermissionDeniedError {
  return new PermissionDeniedError(
    scrub(`Cannot run tool "${name}": ${grant.reason}`, secrets),
    { detail: { tool_name: name, permission: grant.permission } },
  );
}
