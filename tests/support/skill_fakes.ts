/**
 * Stand-ins for the parts around the skills capability: a session that
 * records what it was sent, a scripted LLM provider, a tool host with
 * in-memory tools, and a sandbox that runs a skill function in-process
 * through the real hooks.
 *
 * @module
 */

import type {
  OutgoingMessage,
  SessionScope,
} from "../../runtime/capability.ts";
import type { LlmProvider } from "../../runtime/llm/provider.ts";
import {
  instructionSkillRecord,
  type SkillRecord,
} from "../../runtime/skills/catalog.ts";
import { parseSkillMd } from "../../runtime/skills/skill_md.ts";
import type {
  SkillToolHost,
  SkillToolInfo,
} from "../../runtime/skills/relays.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import type {
  ChatRequest,
  ChatResponse,
  Context,
} from "../../sandbox/sdk/types.ts";
import type {
  Sandbox,
  SandboxCall,
  SandboxHooks,
} from "../../runtime/sandbox/types.ts";

/** A session that keeps every message sent to it. */
export function fakeSession(): SessionScope & {
  sent: OutgoingMessage[];
  end(): void;
} {
  const controller = new AbortController();
  const sent: OutgoingMessage[] = [];
  return {
    id: "session-1",
    token: "",
    state: new Map(),
    send: (m) => sent.push(m),
    signal: controller.signal,
    sent,
    end: () => controller.abort(new Error("the session ended")),
  };
}

/** One scripted model answer. */
export type ScriptedTurn =
  | Partial<ChatResponse> & { tokens?: string[] }
  | ((request: ChatRequest, signal: AbortSignal) => Promise<ChatResponse>);

/** A provider answering from a script, recording requests. */
export function scriptedProvider(script: ScriptedTurn[]): LlmProvider & {
  requests: ChatRequest[];
} {
  const requests: ChatRequest[] = [];
  return {
    provider: "scripted",
    model: "scripted-1",
    requests,
    async chat(request, options = {}) {
      requests.push(request);
      const step = script[requests.length - 1];
      if (step === undefined) throw new Error("Script ran out of turns");
      if (typeof step === "function") {
        return await step(
          request,
          options.signal ?? new AbortController().signal,
        );
      }
      for (const t of step.tokens ?? []) options.onToken?.(t);
      return {
        text: step.text ?? (step.tokens ?? []).join(""),
        tool_calls: step.tool_calls ?? [],
        stop_reason: step.stop_reason ??
          ((step.tool_calls?.length ?? 0) > 0 ? "tool_use" : "end_turn"),
        usage: step.usage ?? { input_tokens: 5, output_tokens: 3 },
        turn: options.turn ?? 1,
      };
    },
  };
}

/** An in-memory tool. */
export interface FakeTool extends Partial<SkillToolInfo> {
  run(
    args: Record<string, unknown>,
    signal: AbortSignal,
    emit: (kind: string, data: Record<string, unknown>) => void,
  ): unknown;
}

/** A tool host over in-memory tools and toolkits. */
export function fakeTools(
  tools: Record<string, FakeTool>,
  toolkits: Record<string, string[]> = {},
): SkillToolHost & {
  calls: { name: string; args: Record<string, unknown> }[];
} {
  const calls: { name: string; args: Record<string, unknown> }[] = [];
  return {
    calls,
    tool: (name) => {
      const t = tools[name];
      return t
        ? {
          name,
          description: t.description ?? `The ${name} tool`,
          inputSchema: t.inputSchema ?? { type: "object" },
          toolkit: t.toolkit ?? null,
          prompt: t.prompt ?? "",
        }
        : undefined;
    },
    toolkit: (name) => toolkits[name] ? { tools: toolkits[name]! } : undefined,
    async call(name, args, { signal, onEvent }) {
      calls.push({ name, args });
      const emit = (kind: string, data: Record<string, unknown>) =>
        onEvent?.(kind, data);
      try {
        return await tools[name]!.run(args, signal, emit);
      } catch (error) {
        throw new SkillboxError(
          "tool_error",
          error instanceof Error ? error.message : String(error),
        );
      }
    },
  };
}

/** A skill body run in-process by {@link inProcessSandbox}. */
export type SkillBody = (
  args: Record<string, unknown>,
  ctx: Context,
) => unknown;

/**
 * A sandbox that runs `bodies[path]` in-process with a ctx built from the
 * real hooks, honouring the timeout and signal like the pool does.
 */
export function inProcessSandbox(
  bodies: Record<string, SkillBody>,
): Pick<Sandbox, "call"> & { calls: SandboxCall[] } {
  const calls: SandboxCall[] = [];
  return {
    calls,
    async call(call: SandboxCall, hooks: SandboxHooks) {
      calls.push(call);
      const signal = hooks.signal ?? new AbortController().signal;
      const ctx: Context = {
        progress: (pct, message) => hooks.onEvent("progress", { pct, message }),
        status: (message) => hooks.onEvent("status", { message }),
        log: (level, message) => hooks.onEvent("log", { level, message }),
        artifact: () => {},
        tools: {
          call: (name, args = {}) => hooks.callTool(name, args, signal),
        },
        llm: { chat: (request) => hooks.chat(request, signal) },
        fetch: (request) =>
          hooks.fetch
            ? hooks.fetch(request, signal)
            : Promise.reject(new Error("No egress here")),
        config: call.config,
        metadata: call.metadata,
        signal,
        session: call.sessionId,
        call: call.callId,
      };
      try {
        const value = await bodies[call.path]!(
          call.args as Record<string, unknown>,
          ctx,
        );
        return { ok: true, value, truncated: false };
      } catch (error) {
        return {
          ok: false,
          code: "tool_error",
          message: error instanceof Error ? error.message : String(error),
          retryable: false,
        };
      }
    },
  };
}

/** Resolves when `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    signal.addEventListener("abort", () => resolve(signal.reason), {
      once: true,
    });
  });
}

/**
 * The record of a `SKILL.md` folder `/s/<name>` (the name its frontmatter
 * gives), a project skill with no resources.
 */
export function skillMdRecord(text: string): SkillRecord {
  const manifest = parseSkillMd(text);
  const folder = `/s/${manifest.name}`;
  return instructionSkillRecord(
    { ...manifest, folder, file_path: `${folder}/SKILL.md`, resources: [] },
    { source: "project" },
  );
}
