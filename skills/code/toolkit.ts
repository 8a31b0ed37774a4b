/**
 * The code toolkit: evaluates TypeScript or JavaScript in a fresh, empty
 * sandbox (`eval_typescript`), or with the session's tools and skills as
 * its only reach (`run_code`, code mode).
 *
 * @module
 */

import type { ToolkitDef } from "../../sandbox/sdk/types.ts";

export default {
  kind: "toolkit",
  name: "code",
  alias: "Code",
  category: "compute",
  description:
    "Run TypeScript/JavaScript in a throwaway sandbox with no file, network or environment access: pure calculations and parsing (eval_typescript), or code that chains your tools and skills and returns only what matters (run_code).",
  tags: ["code", "typescript", "javascript", "eval", "compute", "code-mode"],
  // No config, and no permissions at all: the evaluated code gets nothing.
  permissions: {},
} satisfies ToolkitDef;
