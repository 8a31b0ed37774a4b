/**
 * `eval_typescript`: evaluates code in a fresh worker with no permissions
 * and returns its value and console output.
 *
 * @module
 */

import type { ToolDef } from "../../sandbox/sdk/types.ts";
import type { ConsoleLine, EvalResult } from "./_evaluator.ts";
import {
  beginCall,
  CONSOLE_OUTPUT,
  ERROR_OUTPUT,
  evaluateInPlace,
  evaluatorSource,
  PERMISSION_NAMES,
} from "./_evaluator.ts";

interface Args {
  code: string;
}

export default {
  kind: "tool",
  name: "eval_typescript",
  toolkit: "code",
  description:
    "Run a TypeScript or JavaScript snippet and get the value of its last expression (or its `export default`) plus everything it printed with console.log. Use it for calculations, data transformation, parsing, regex checks, date math and quick experiments. The code has no file, network or environment access, and nothing persists between calls.",
  tags: ["code", "typescript", "javascript", "eval", "calculate"],
  isolation: "per-call",
  // The code is the client's: run it in processes of the calling session
  // only, so it can read (raw fd 0, memory) and crash nothing of others.
  runs_client_code: true,
  permissions: {},
  input: {
    type: "object",
    properties: {
      code: {
        type: "string",
        description:
          "TypeScript or JavaScript. Top-level await works. The last expression is the result; with import/export statements the module's default export is",
      },
    },
    required: ["code"],
    additionalProperties: false,
  },
  output: {
    type: "object",
    properties: {
      value: { description: "The result as JSON (null if not serializable)" },
      display: {
        type: "string",
        description: "The result as Deno.inspect prints it",
      },
      value_type: { type: "string" },
      console: CONSOLE_OUTPUT,
      error: ERROR_OUTPUT,
    },
  },
  prompt: [
    "- The result is the value of the last expression: end with the expression you want (`result`), not `console.log(result)`, to get structured JSON back.",
    "- Each call starts from scratch; define everything you need in the one snippet.",
    "- No `fetch`, files, env or subprocesses, and no `npm:` or remote imports: it is a pure computation sandbox.",
    "- Type errors are not checked: types are stripped, not verified.",
  ].join("\n"),
  async run(args, ctx) {
    const { lines, onConsole } = beginCall(args, ctx);
    const result = typeof Worker === "undefined"
      ? await evaluateInPlace(args.code, { onConsole, signal: ctx.signal })
      : await evaluateInWorker(args.code, onConsole, ctx.signal);
    const data = {
      value: result.value,
      display: result.display,
      value_type: result.value_type,
      console: lines,
      error: result.error,
    };
    return {
      __skillbox_output: true,
      data,
      summary: result.error
        ? `Threw ${result.error}`
        : `${result.value_type}: ${result.display.slice(0, 200)}`,
      exit_code: result.error ? 1 : 0,
    };
  },
} satisfies ToolDef<Args>;

type Console = (line: ConsoleLine) => void;

/** Elsewhere (tests, embedding): a throwaway worker with no permissions. */
async function evaluateInWorker(
  code: string,
  onConsole: Console,
  signal: AbortSignal,
): Promise<EvalResult> {
  const worker = new Worker(
    "data:application/javascript;base64," + toBase64(evaluatorSource),
    workerOptions(),
  );
  let onAbort = () => {};
  try {
    return await new Promise<EvalResult>((resolve, reject) => {
      worker.onmessage = (
        e: MessageEvent<EvalResult | (ConsoleLine & { type: "console" })>,
      ) => {
        const msg = e.data;
        if (msg.type === "console") onConsole(msg);
        else resolve(msg);
      };
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(`The code crashed its sandbox: ${e.message}`));
      };
      onAbort = () =>
        reject(signal.reason ?? new Error("The call was aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
      worker.postMessage({ code });
    });
  } finally {
    signal.removeEventListener("abort", onAbort);
    // A busy loop survives terminate(); the sandbox process is killed at
    // the call's timeout, which is why this tool is isolated per call.
    worker.terminate();
  }
}

/**
 * Options for the evaluator worker. A worker inherits its parent's
 * permissions; in the skillbox sandbox this toolkit is granted none, so
 * inheriting is already "none". Where the caller holds permissions (tests,
 * embedding), they are dropped with `deno.permissions: "none"`, which needs
 * `--unstable-worker-options`; without it, refuse rather than leak them.
 */
function workerOptions(): WorkerOptions {
  const holds = PERMISSION_NAMES.some((name) =>
    Deno.permissions.querySync({ name }).state === "granted"
  );
  if (!holds) return { type: "module" };
  if (!workerOptionsEnabled()) {
    throw new Error(
      "eval_typescript runs code with no permissions: run it in the skillbox sandbox, or start Deno with --unstable-worker-options",
    );
  }
  return { type: "module", deno: { permissions: "none" } } as WorkerOptions;
}

function workerOptionsEnabled(): boolean {
  try {
    const argv = Deno.readTextFileSync("/proc/self/cmdline").split("\0");
    return argv.some((a) =>
      a === "--unstable-worker-options" || a === "--unstable"
    );
  } catch {
    return false;
  }
}

function toBase64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}
