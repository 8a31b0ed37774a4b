/**
 * `code_api`: the TypeScript declarations of what `run_code`'s `tools` and
 * `skills` globals hold for the calling session. Only the host knows the
 * session's view of the registry, so the host answers this tool itself
 * (`runtime/code/code_api.ts`), after the checks every call passes; this
 * module is its definition, and its `run` is reached only on a host that
 * does not answer it.
 *
 * @module
 */

import type { ToolDef } from "../../sandbox/sdk/types.ts";

interface Args {
  query?: string;
  limit?: number;
}

export default {
  kind: "tool",
  name: "code_api",
  toolkit: "code",
  description:
    "Get the TypeScript declarations of what run_code's `tools` and `skills` globals hold for this session: one typed async function per tool and skill you may call, with its arguments, its result and its description. Call it before writing code for run_code. Pass `query` (words describing the task) to get only the best matching tools and skills when there are many.",
  tags: ["code", "typescript", "api", "declarations", "tools"],
  permissions: {},
  input: {
    type: "object",
    properties: {
      query: {
        type: "string",
        maxLength: 500,
        description:
          "Words describing the task; only the tools and skills that match are declared. Empty: all of them",
      },
      limit: {
        type: "integer",
        minimum: 1,
        maximum: 200,
        description:
          "With a query, how many tools (and how many skills) at most (default 20)",
      },
    },
    additionalProperties: false,
  },
  output: {
    type: "object",
    properties: {
      declarations: {
        type: "string",
        description:
          "TypeScript: `declare const tools: {...}` and `declare const skills: {...}`",
      },
      tools: {
        type: "array",
        items: { type: "string" },
        description: "The tools declared",
      },
      skills: {
        type: "array",
        items: { type: "string" },
        description: "The skills declared",
      },
      omitted: {
        type: "integer",
        description: "Tools and skills left out to keep the answer short",
      },
    },
    required: ["declarations", "tools", "skills", "omitted"],
  },
  run(_args) {
    throw new Error(
      'Cannot run tool "code_api": the host answers it itself, and this host does not',
    );
  },
} satisfies ToolDef<Args>;
