/**
 * What a module defines, as discovery reports it: the one `describe` of
 * skillbox, code both sides run. The worker bootstrap runs it on a loaded
 * module namespace; the host's static discovery path (`runtime/discovery/static.ts`) runs
 * it on the values it read from a module's syntax, with hooks that give up
 * wherever describing would run author code. The worker reaches workers as
 * one self-contained text, so this module imports nothing at run time (the
 * bootstrap's loader inlines it there, see `loadBootstrap`).
 *
 * @module
 */

/** What describing does where it would run author code. */
export interface DescribeHooks {
  /** Converts a zod schema (an object with `_zod`) to JSON Schema. */
  zodToJsonSchema(schema: unknown): unknown;
  /** `String()` of an object or function found in a permission list. */
  stringifyObject(value: object): string;
}

/** One definition a module exports, as discovery reports it. */
export interface DescribedExport {
  export: string;
  kind: unknown;
  name: unknown;
  fields: Record<string, unknown>;
  permissions: Record<string, string[]> | "dynamic";
  runnable: boolean;
}

/**
 * A definition's permissions as lists of strings: every list it names (the
 * host keeps only the permission kinds it knows, `protocol/permissions.ts`),
 * each item as `String()` makes it, objects and functions through
 * `stringifyObject` (their `String()` runs author code).
 *
 * @param value the `permissions` field, or what its function returned
 * @param stringifyObject `String()` of an object or function item
 * @returns the lists by kind
 * @example Items become strings, non-lists are dropped
 * ```ts
 * import { normalizePermissions } from "./describe.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   normalizePermissions({ read: ["/a", 1, null], net: "x" }, String),
 *   { read: ["/a", "1", "null"] },
 * );
 * ```
 */
export function normalizePermissions(
  value: unknown,
  stringifyObject: (value: object) => string,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (typeof value !== "object" || value === null) return out;
  for (const [key, list] of Object.entries(value)) {
    if (!Array.isArray(list)) continue;
    out[key] = list.map((item) =>
      typeof item === "object" && item !== null || typeof item === "function"
        ? stringifyObject(item)
        : String(item)
    );
  }
  return out;
}

/**
 * Describes a module's definitions: every export that is an object with a
 * known `kind`, default first and the others by name, with its JSON fields
 * (functions left out, schema fields as JSON Schema), its permissions (or
 * `"dynamic"` when computed by a function) and whether it can run.
 *
 * @param names the module's export names, in namespace order
 * @param get the value of one export
 * @param hooks what to do where author code would run
 * @returns the definitions, in report order
 * @example A tool and a plain value
 * ```ts
 * import { describeExports } from "./describe.ts";
 * import assert from "node:assert/strict";
 * const mod: Record<string, unknown> = {
 *   default: { kind: "tool", name: "t", run: () => 1 }, n: 1,
 * };
 * const hooks = { zodToJsonSchema: () => null, stringifyObject: String };
 * assert.deepEqual(describeExports(Object.keys(mod), (n) => mod[n], hooks), [
 *   { export: "default", kind: "tool", name: "t",
 *     fields: { kind: "tool", name: "t" }, permissions: {}, runnable: true },
 * ]);
 * ```
 */
export function describeExports(
  names: readonly string[],
  get: (name: string) => unknown,
  hooks: DescribeHooks,
): DescribedExport[] {
  const kinds = ["tool", "toolkit", "skill"];
  // deno-fmt-ignore
  const schemaFields = ["input", "output", "input_schema", "output_schema", "config"];
  const toJsonSchema = (schema: unknown): unknown =>
    typeof schema === "object" && schema !== null && "_zod" in schema
      ? hooks.zodToJsonSchema(schema)
      : JSON.parse(JSON.stringify(schema ?? null));
  const out: DescribedExport[] = [];
  // Code-unit order, the same on every machine and locale (inlined: this
  // module is bundled into the worker bootstrap without its imports).
  const sorted = [...names].sort((a, b) =>
    a === "default" ? -1 : b === "default" ? 1 : a < b ? -1 : a > b ? 1 : 0
  );
  for (const exportName of sorted) {
    const def = get(exportName) as Record<string, unknown> | null;
    if (typeof def !== "object" || def === null) continue;
    if (!kinds.includes(def.kind as string)) continue;
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(def)) {
      if (typeof value === "function") continue;
      if (schemaFields.includes(key)) {
        fields[key] = toJsonSchema(value);
        continue;
      }
      try {
        const json = JSON.stringify(value);
        if (json !== undefined) fields[key] = JSON.parse(json);
      } catch {
        // Not serializable: not part of the description.
      }
    }
    out.push({
      export: exportName,
      kind: def.kind,
      name: typeof def.name === "string" ? def.name : exportName,
      fields,
      permissions: typeof def.permissions === "function"
        ? "dynamic"
        : normalizePermissions(def.permissions, hooks.stringifyObject),
      runnable: typeof def.run === "function",
    });
  }
  return out;
}
