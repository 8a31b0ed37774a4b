/**
 * The contract between the host (`runtime/`) and the sandbox: how the host
 * reads definitions out of untrusted modules and runs their code, and the
 * hooks through which `ctx` calls reach back into the host.
 *
 * @module
 */

import type { ErrorCode } from "../../protocol/codes.ts";
import type { FetchRequest, FetchResponse } from "../../protocol/egress.ts";
import type { ChatRequest, ChatResponse } from "../../protocol/chat.ts";
import type { Permissions } from "../../protocol/permissions.ts";

/** A definition read from a module by a sandbox with no permissions. */
export interface DescribedDefinition {
  /** The export it came from: `"default"` or the export's name. */
  export: string;
  kind: "tool" | "toolkit" | "skill";
  name: string;
  /**
   * Every JSON-serializable field of the definition as the author wrote it
   * (snake_case), with zod schemas already converted to JSON Schema in
   * `input`, `output`, `input_schema`, `output_schema` and `config`.
   */
  fields: Record<string, unknown>;
  /** Static permissions, or `"dynamic"` when computed from configuration. */
  permissions: Permissions | "dynamic";
  /** Whether the definition has a `run` function. */
  runnable: boolean;
}

/** What reading one module gave. */
export interface DescribedModule {
  /** Absolute path of the module file. */
  path: string;
  /** Content hash of the module and its local imports (its version). */
  hash: string;
  definitions: DescribedDefinition[];
  /** Why the module could not be read (load error, throw, hang), or null. */
  error: string | null;
  /**
   * The local files it is made of (the module and what it imports), when
   * known: a watcher reads it again when one of them changes.
   */
  files?: string[];
}

/** One call into untrusted code. */
export interface SandboxCall {
  /** Absolute path of the module file. */
  path: string;
  /** Which export holds the definition. */
  export: string;
  /** The module version (its hash); a warm worker only serves its own. */
  version: string;
  /** Arguments, already validated by the host. */
  args: unknown;
  /** The grant: absolute paths, already checked against the policy. */
  grant: Permissions;
  /** Wall-clock limit in milliseconds. */
  timeoutMs: number;
  sessionId: string;
  callId: string;
  /** What `ctx.config` holds for this call. */
  config: Record<string, unknown>;
  /** What `ctx.metadata` holds for this call. */
  metadata: Record<string, unknown>;
  /** `"per-call"` forces a fresh worker. */
  isolation: "warm" | "per-call";
  /**
   * Whose code runs: `"module"` (the author's, in a process of its module)
   * or `"session"` (code the client sent, as `eval_typescript` runs, in a
   * process of the calling session only). @default "module"
   */
  principal?: "module" | "session";
}

/** How `ctx` calls reach the host during a {@link SandboxCall}. */
export interface SandboxHooks {
  /** Aborts the call (client gone, cancelled); the sandbox stops it for real. */
  signal?: AbortSignal;
  /** A `progress` / `status` / `log` / `artifact` event from `ctx`. */
  onEvent(kind: string, data: Record<string, unknown>): void;
  /** `ctx.tools.call`: the host checks, runs and answers (or throws). */
  callTool(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<unknown>;
  /** `ctx.llm.chat`: the host calls the provider, relaying tokens itself. */
  chat(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse>;
  /**
   * `ctx.fetch`: the host's egress broker performs the request, scoped to
   * the call's grant. Absent: `ctx.fetch` is refused.
   */
  fetch?(request: FetchRequest, signal: AbortSignal): Promise<FetchResponse>;
}

/** What `run` returned: its data, or a failure with an A2E code. */
export type SandboxOutcome =
  | {
    ok: true;
    /** The value `run` returned (an `Output` object keeps its fields). */
    value: unknown;
    /** True when the value was cut to the size limit. */
    truncated: boolean;
  }
  | {
    ok: false;
    /** `tool_error`, `timeout`, `out_of_memory`, `sandbox_crash`, ... */
    code: ErrorCode;
    /** The thrown message (never a host stack). */
    message: string;
    retryable: boolean;
  };

/** Runs untrusted code; implemented by the sandbox process pool. */
export interface Sandbox {
  /** Reads a module's definitions without granting it anything. */
  describe(path: string): Promise<DescribedModule>;
  /** Evaluates a `"dynamic"` permissions function for a configuration. */
  resolvePermissions(
    path: string,
    exportName: string,
    config: Record<string, unknown>,
  ): Promise<Permissions>;
  /** Runs one call; never throws for failures of the untrusted code. */
  call(call: SandboxCall, hooks: SandboxHooks): Promise<SandboxOutcome>;
  /**
   * A session closed: retires what runs only for it (its session-keyed
   * processes, where code it sent ran) and refuses its later calls.
   */
  endSession?(sessionId: string): void;
  /** Stops every sandbox process. */
  close(): Promise<void>;
}

/** What a sandbox process reports of its workers. */
export interface ProcessWorkerStats {
  /** Workers alive (warm, primed, spare and running). */
  workers: number;
  /** Warm workers kept for the session asked about. */
  sessionWorkers: number;
}

/** A live sandbox process, for monitoring and tests. */
export interface SandboxProcessInfo {
  pid: number;
  /** Whom it serves: `module:<folder>`, `session:<id>`, or `spare:` (no one yet). */
  principal: string;
  /** The grant it runs (canonical JSON). */
  grant: string;
  /** Operations in flight. */
  busy: number;
  /** Set after a timeout it did not answer: killed when idle. */
  tainted: boolean;
  /** Resolves with the exit code once it is gone. */
  exited: Promise<number>;
  /** Asks the process for its worker counts (null once it is gone). */
  stats(session?: string): Promise<ProcessWorkerStats | null>;
}
