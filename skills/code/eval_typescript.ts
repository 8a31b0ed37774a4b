/**
 * `eval_typescript`: evaluates code in a fresh worker with no permissions
 * and returns its value and console output.
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
  evaluateInWorker,
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
  input: codeInput(
    "TypeScript or JavaScript. Top-level await works. The last expression is the result; with import/export statements the module's default export is",
  ),
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
    const { lines, onConsole } = beginCall(ctx);
    const evaluate = typeof Worker === "undefined"
      ? evaluateInPlace
      : evaluateInWorker;
    const result = await evaluate(args.code, { onConsole, signal: ctx.signal });
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
