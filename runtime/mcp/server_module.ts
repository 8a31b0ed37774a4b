/**
 * How an imported MCP server is listed in the registry: one module per
 * server, at a path under {@link MCP_PATH_PREFIX}.
 *
 * @module
 */

import type { LoadedModule } from "../registry/normalize.ts";
import type { DescribedDefinition } from "../sandbox/types.ts";
import type { ServerSlot } from "./server_slot.ts";

/**
 * Registry paths of imported servers start with this: absolute (grants are
 * checked on absolute paths) and never a real file.
 */
export const MCP_PATH_PREFIX = "/mcp:/";

const NAME_OK = /[^A-Za-z0-9_.-]/g;

/**
 * The registry name of a server's tool or skill: `<server>__<name>`, cut to
 * what a name may hold.
 *
 * @param server the server's name
 * @param name the tool's or skill's name on it
 * @returns the name
 * @example
 * ```ts
 * import { importedName } from "./server_module.ts";
 * import assert from "node:assert/strict";
 * assert.equal(importedName("kit", "wave"), "kit__wave");
 * ```
 */
export function importedName(server: string, name: string): string {
  return `${server}__${name}`.replace(NAME_OK, "_").slice(0, 64);
}

/**
 * An imported server as a registry module: a toolkit named like the server
 * (saying why when it is unavailable), a tool `<server>__<tool>` for each
 * of its tools and a skill `<server>__<skill>` for each of its skills
 * (a refused one listed with why), with a hash that changes when any of
 * that does.
 *
 * @param slot the server's state
 * @returns the registry module
 * @example A server that did not start is an unavailable toolkit
 * ```ts
 * import { serverModule } from "./server_module.ts";
 * import { ServerSlot } from "./server_slot.ts";
 * import assert from "node:assert/strict";
 * const loaded = serverModule(new ServerSlot("files", { command: "x" }));
 * assert.equal(loaded.module.path, "/mcp:/files");
 * assert.deepEqual(loaded.module.definitions[0]!.fields.tags, ["mcp", "unavailable"]);
 * ```
 */
export function serverModule(slot: ServerSlot): LoadedModule {
  const available = slot.client !== null;
  const definitions: DescribedDefinition[] = [{
    export: "toolkit",
    kind: "toolkit",
    name: slot.name,
    fields: {
      description: `Tools of the MCP server "${slot.name}"${
        available ? "" : ` (unavailable: ${slot.reason})`
      }${
        slot.refusedSkills.map((r) => `; skill "${r.uri}" refused: ${r.reason}`)
          .join("")
      }`,
      tags: available ? ["mcp"] : ["mcp", "unavailable"],
    },
    permissions: {},
    runnable: false,
  }];
  for (const tool of slot.tools) {
    const output = tool.outputSchema;
    definitions.push({
      export: tool.name,
      kind: "tool",
      name: importedName(slot.name, tool.name),
      fields: {
        description: tool.description ?? tool.title ?? tool.name,
        input: tool.inputSchema,
        ...(output ? { output } : {}),
        toolkit: slot.name,
        idempotent: tool.annotations?.idempotentHint ?? false,
        tags: ["mcp"],
      },
      permissions: {},
      runnable: true,
    });
  }
  for (const skill of slot.skills) {
    definitions.push({
      export: skill.uri,
      kind: "skill",
      name: importedName(slot.name, skill.name),
      fields: {
        description: skill.description,
        // The origin, where the model reads it (SEP-2640: MCP-served skill
        // content is tagged with its server).
        instructions:
          `[Skill ${skill.uri} served by the MCP server "${slot.name}"; untrusted content.]\n\n${skill.instructions}`,
        toolkits: [slot.name],
        tags: ["mcp"],
        metadata: { mcp_server: slot.name, uri: skill.uri },
      },
      permissions: {},
      runnable: false,
    });
  }
  // A refused skill is listed Blocked with the reason (`catalog.ts` reads
  // `metadata.refused`, set here and never by the server), unless a
  // verified skill holds its name.
  const names = new Set(slot.skills.map((s) => s.name));
  for (const refused of slot.refusedSkills) {
    if (refused.name === undefined || names.has(refused.name)) continue;
    names.add(refused.name);
    definitions.push({
      export: refused.uri,
      kind: "skill",
      name: importedName(slot.name, refused.name),
      fields: {
        description: `Refused from the MCP server "${slot.name}"`,
        toolkits: [slot.name],
        tags: ["mcp"],
        metadata: {
          mcp_server: slot.name,
          uri: refused.uri,
          refused: refused.reason,
        },
      },
      permissions: {},
      runnable: false,
    });
  }
  const text = JSON.stringify([
    available,
    slot.reason,
    definitions,
    slot.refusedSkills,
  ]);
  return {
    origin: "mcp",
    root: MCP_PATH_PREFIX,
    module: {
      path: MCP_PATH_PREFIX + slot.name,
      hash: hashOf(text),
      definitions,
      error: null,
    },
  };
}

// FNV-1a: a version tag that changes when the listing does.
function hashOf(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}
