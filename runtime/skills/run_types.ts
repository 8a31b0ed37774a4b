/**
 * The types a skill call is run with: the tool host a skill reaches tools
 * through, the LLM resolver, and the host's limits on skills. `run.ts`
 * re-exports them; the pieces of a run (`tool_relay.ts`, `chat_relay.ts`,
 * `turn_budget.ts`) import them from here.
 *
 * @module
 */

import type { SessionScope } from "../capability.ts";
import type { ErrorCode } from "../../protocol/codes.ts";
import type { LlmChoice } from "../../protocol/skill.ts";
import type { Tool } from "../../protocol/tool.ts";
import type { LlmProvider } from "../llm/provider.ts";
import type { Permissions } from "../../protocol/permissions.ts";
import type { EgressBroker } from "../egress/broker.ts";

/**
 * A tool as the skills capability sees it: a view of the domain `Tool` (the
 * registry's entries are ones) plus its guidance for models.
 */
export interface SkillToolInfo
  extends Pick<Tool, "name" | "description" | "inputSchema" | "toolkit"> {
  /** Markdown guidance for models, or "". */
  readonly prompt: string;
}

/** What one tool call gave: its value, or a failure with an A2E code. */
export type SkillToolOutcome =
  | { ok: true; value: unknown }
  | { ok: false; code: ErrorCode; message: string };

/** Options of {@link SkillToolHost.call}. */
export interface SkillToolCallOptions {
  /** The session the skill runs for (toolkit configuration, policy). */
  session: SessionScope;
  /** Aborted when the skill ends or is cancelled. */
  signal: AbortSignal;
  /** Time left for the skill, in milliseconds. */
  timeoutMs: number;
  /**
   * The tool's own `progress`/`status`/`log`/`artifact` events, as they
   * happen (relayed as the skill's events, tagged with the tool's name).
   */
  onEvent?: (kind: string, data: Record<string, unknown>) => void;
  /** The observer's id of the skill's run: the tool call is its child. */
  parentRunId?: string;
}

/**
 * The tools a skill may use, and the one path that runs them (policy
 * checks, argument validation, sandbox). The registry and tools capability
 * provide it; see `registryToolHost` in `capability.ts`.
 */
export interface SkillToolHost {
  /** A loaded tool by name. */
  tool(name: string): SkillToolInfo | undefined;
  /** A loaded toolkit's tool names. */
  toolkit(name: string): { readonly tools: readonly string[] } | undefined;
  /** Runs a tool; resolves with its outcome, never throws for tool failures. */
  call(
    name: string,
    args: Record<string, unknown>,
    options: SkillToolCallOptions,
  ): Promise<SkillToolOutcome>;
  /**
   * A session's configuration of a toolkit and the grant it gives, checked
   * against the host policy exactly as for a call of the toolkit's tools;
   * `override` replaces fields of the configuration for the check (a
   * symlinked root's real path). Null when the toolkit is not loaded or
   * the session has not configured it. Absent: no toolkit is reachable
   * outside its tools (skill scripts get no toolkit mounts).
   */
  toolkitGrant?(
    name: string,
    session: SessionScope,
    override?: Record<string, unknown>,
  ): Promise<ToolkitGrant | null>;
}

/** What {@link SkillToolHost.toolkitGrant} found. */
export type ToolkitGrant =
  | {
    ok: true;
    /** The configuration, as the toolkit's tools would get it. */
    config: Readonly<Record<string, unknown>>;
    /** The checked grant (absolute paths). */
    grant: Readonly<Permissions>;
  }
  | {
    ok: false;
    /** Why not: an invalid configuration or a permission the policy refused. */
    reason: string;
  };

/** Picks the LLM for a call: `override`, else `skill`, else the host default. */
export type LlmResolver = (
  configs: { override: LlmChoice | null; skill: LlmChoice | null },
) => LlmProvider;

/** The host's limits on skills. */
export interface SkillLimits {
  /** Policy cap on any skill's wall-clock time, in seconds. @default 600 */
  maxTimeoutSeconds?: number;
  /** `max_turns` of a skill that sets none. @default 10 */
  defaultMaxTurns?: number;
  /** Policy cap on `max_turns`. @default 50 */
  maxTurns?: number;
  /** Events kept in the outcome's `events`. @default 2000 */
  maxEvents?: number;
  /**
   * Interpreters of skill scripts by extension (`policy.interpreters`).
   * @default {".py": "python3", ".sh": "sh", ".js": "deno", ".ts": "deno"}
   */
  interpreters?: Readonly<Record<string, string>>;
  /**
   * Variables a skill's scripts may get when the skill declares them
   * (`policy.permissions.env`; `"*"`: any). @default []
   */
  scriptEnvGrant?: readonly string[];
  /**
   * Hosts a skill's scripts may reach when the skill declares them
   * (`policy.permissions.net`), only through `scriptEgress`. @default []
   */
  scriptNetGrant?: readonly string[];
  /** The host's egress broker; none: scripts get no network. @default none */
  scriptEgress?: EgressBroker;
  /** `sandbox.confinement`; scripts run only confined. @default "auto" */
  scriptConfinement?: "auto" | "required" | "off";
  /** Address-space cap of a skill script, in bytes. @default 512 MiB */
  scriptMemoryBytes?: number;
  /**
   * A skill script's workspace quota (`sandbox.script_workspace_mb`,
   * `sandbox.script_workspace_files`). @default 64 MiB, 10,000 files
   */
  scriptWorkspace?: { bytes: number; files: number };
  /**
   * What the host reads back from a script's workspace
   * (`store.script_files_max_bytes`, `store.script_files_max`).
   * @default 4 MiB, 100 files
   */
  scriptFiles?: { maxBytes: number; maxFiles: number };
  /** Longest tool result fed back to the model, in characters. @default 32000 */
  maxToolResultChars?: number;
}
