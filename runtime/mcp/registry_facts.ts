/**
 * What the MCP tool list needs from the registry beyond the A2E wire
 * definition: a tool's JSON Schemas, its and its toolkit's permissions (for
 * the annotations) and its origin.
 *
 * @module
 */

import type { RegistrySnapshot } from "../registry/types.ts";
import type { ToolFacts } from "./tool_mapping.ts";

/**
 * Looks tools up in the registry's current snapshot.
 *
 * @param snapshot returns the current snapshot, or null before the load
 * @returns the lookup
 * @example
 * ```ts
 * import { registryFacts } from "./registry_facts.ts";
 * import { buildSnapshot } from "../registry/normalize.ts";
 * import assert from "node:assert/strict";
 * const snapshot = buildSnapshot([]);
 * assert.equal(registryFacts(() => snapshot)("nope"), undefined);
 * ```
 */
export function registryFacts(
  snapshot: () => RegistrySnapshot | null,
): (name: string) => ToolFacts | undefined {
  return (name) => {
    const snap = snapshot();
    const tool = snap?.tools.get(name);
    if (!snap || !tool) return undefined;
    const kit = tool.toolkit === null
      ? undefined
      : snap.toolkits.get(tool.toolkit);
    return {
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema,
      permissions: kit ? [tool.permissions, kit.permissions] : [
        tool.permissions,
      ],
      origin: tool.origin,
    };
  };
}
