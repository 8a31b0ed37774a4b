/**
 * The code toolkit: evaluates TypeScript or JavaScript in a fresh, empty
 * sandbox.
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
    "Evaluate TypeScript/JavaScript in a throwaway sandbox with no file, network or environment access: calculations, data transformation, parsing, quick experiments.",
  tags: ["code", "typescript", "javascript", "eval", "compute"],
  // No config, and no permissions at all: the evaluated code gets nothing.
  permissions: {},
} satisfies ToolkitDef;
