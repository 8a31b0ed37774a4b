/**
 * `run_code` (code mode): runs the client's TypeScript in the session's
 * sandbox, as `eval_typescript` does, with two globals: `tools` (one async
 * function per tool the session may call) and `skills` (one per published
 * skill). Each call is a `ctx.tools.call` RPC naming only the tool and its
 * arguments: the host binds who calls (the session, this call's run, its
 * deadline) and takes the session's normal call path
 * (runtime/code/inner_calls.ts).
 *
 * @module
 */

import type { ToolDef } from "../../sandbox/sdk/types.ts";
import {
  beginCall,
  codeInput,
  CONSOLE_OUTPUT,
  ERROR_OUTPUT,
  evaluateInPlace,
} from "./_evaluator.ts";

interface Args {
  code: string;
}

/** One inner call, as the result lists it. */
interface CallRecord {
  name: string;
  ok: boolean;
  error_code: string | null;
  duration_ms: number;
}

/** What the host answers for one inner call. */
type Answer =
  | { ok: true; data: unknown; duration_ms: number }
  | { ok: false; code: string; message: string; duration_ms: number };

// How the host tells a skill from a tool on the `tool` RPC.
const SKILL_PREFIX = "skills/";

export default {
  kind: "tool",
  name: "run_code",
  toolkit: "code",
  description:
    "Run TypeScript that calls your tools and skills, and get back only what it returns. `await tools.<name>(args)` calls any tool you may call (resolving to its result data; a failure throws an Error with `code` and `message`), `await skills.<name>(args)` runs a skill. Chain many calls, filter big results, and return the few lines that matter: one round trip instead of many. Call `code_api` first for the TypeScript declarations of what `tools` and `skills` hold.",
  tags: ["code", "typescript", "code-mode", "tools", "orchestrate"],
  isolation: "per-call",
  // The code is the client's: it runs in processes of the calling session.
  runs_client_code: true,
  permissions: {},
  input: codeInput(
    "TypeScript or JavaScript; top-level await works. Use `tools.<name>(args)` and `skills.<name>(args)`. The last expression (or a top-level `return`) is the result.",
  ),
  output: {
    type: "object",
    properties: {
      value: { description: "The result as JSON (null if not serializable)" },
      console: CONSOLE_OUTPUT,
      calls: {
        type: "array",
        description: "One entry per inner call, in the order they ended",
        items: {
          type: "object",
          properties: {
            name: { type: "string" },
            ok: { type: "boolean" },
            error_code: { type: ["string", "null"] },
            duration_ms: { type: "number" },
          },
        },
      },
      error: ERROR_OUTPUT,
    },
  },
  prompt: [
    "- Call `code_api` first: it gives the TypeScript signature of every tool and skill you can reach from here.",
    "- Return only what you need (counts, the matching lines, a summary): the rest never reaches your context.",
    "- A failed call throws: `try { await tools.x(a) } catch (e) { e.code }`; calls in `Promise.all` run in parallel within your session's limits.",
    "- No files, network or environment of its own: everything goes through `tools` and `skills`, with your session's permissions and quotas.",
  ].join("\n"),
  async run(args, ctx) {
    const { lines, onConsole } = beginCall(ctx);
    if (typeof Worker !== "undefined") {
      throw new Error(
        "run_code runs only in the skillbox sandbox: its tools are the host's",
      );
    }
    const calls: CallRecord[] = [];
    const invoke = async (name: string, input: unknown) => {
      let answer: Answer;
      try {
        answer = await ctx.tools.call(
          name,
          (input ?? {}) as Record<string, unknown>,
        ) as Answer;
      } catch (err) {
        answer = {
          ok: false,
          code: "runtime_error",
          message: err instanceof Error ? err.message : String(err),
          duration_ms: 0,
        };
      }
      calls.push({
        name,
        ok: answer.ok,
        error_code: answer.ok ? null : answer.code,
        duration_ms: answer.duration_ms,
      });
      if (answer.ok) return answer.data;
      throw Object.assign(new Error(answer.message), { code: answer.code });
    };
    const result = await evaluateInPlace(args.code, {
      onConsole,
      signal: ctx.signal,
      globals: {
        tools: callables((name) => (input) => invoke(name, input)),
        skills: callables((name) => (input) =>
          invoke(SKILL_PREFIX + name, input)
        ),
      },
    });
    return {
      __skillbox_output: true,
      data: {
        value: result.value,
        console: lines,
        calls,
        error: result.error,
      },
      summary: result.error
        ? `Threw ${result.error} after ${calls.length} calls`
        : `${calls.length} calls; ${result.value_type}: ${
          result.display.slice(0, 200)
        }`,
      exit_code: result.error ? 1 : 0,
    };
  },
} satisfies ToolDef<Args>;

// Names the language itself looks up on objects (`await`, JSON, string
// conversion): never tools, so returning or awaiting `tools` calls nothing.
const NOT_CALLABLE = new Set([
  "then",
  "toJSON",
  "toString",
  "valueOf",
  "constructor",
]);

/**
 * An object whose every property is a function of that name: the host
 * decides what exists.
 */
function callables(
  make: (name: string) => (input?: unknown) => Promise<unknown>,
): Record<string, (input?: unknown) => Promise<unknown>> {
  return new Proxy(Object.create(null), {
    get: (_target, name) =>
      typeof name === "string" && !NOT_CALLABLE.has(name)
        ? make(name)
        : undefined,
  });
}
