/**
 * A2E's dialect of the skill frontmatter: `version`, `triggers`,
 * `when_to_use`, `argument_hint` (or `argument-hint`), `user-invocable`,
 * `tools`, `toolkits`, `max_turns`, `timeout_seconds`, `category`, `tags`,
 * `icon`, `llm`, and the schemas (`input_schema`/`output_schema`, or A2E's
 * `inputs`/`outputs` parameter maps). `tools` and the specification's
 * `allowed-tools` may name tools as other runtimes do; see `tool_names.ts`.
 *
 * Every field is optional and read leniently: a value of the wrong type is
 * dropped with a warning and the field keeps its default.
 *
 * @module
 */

import type { JsonObject, JsonSchema } from "../../protocol/json.ts";
import type { FieldReader } from "./frontmatter.ts";
import { parameterMapToSchema } from "./parameter_map.ts";
import { type CommandRule, mapToolNames, splitToolList } from "./tool_names.ts";

/** A skill's own LLM choice, as written in its frontmatter (`llm:`). */
export interface SkillLlmConfig {
  provider_name: string;
  provider_credentials: JsonObject;
  provider_config: JsonObject;
}

/** Keys that only A2E's dialect uses: one of them makes a file A2E's. */
export const A2E_KEYS: readonly string[] = [
  "triggers",
  "when_to_use",
  "when-to-use",
  "argument_hint",
  "toolkits",
  "tools",
  "max_turns",
  "max-turns",
  "timeout_seconds",
  "timeout-seconds",
  "inputs",
  "outputs",
  "input_schema",
  "output_schema",
  "llm",
  "category",
  "tags",
  "icon",
];

/** What the A2E fields say, with defaults filled in. */
export interface A2eFields {
  version: string;
  triggers: string[];
  when_to_use: string;
  argument_hint: string;
  /** `user-invocable`. @default null (not said) */
  user_invocable: boolean | null;
  /** skillbox tool names, from `tools` and `allowed-tools`. */
  tools: string[] | null;
  toolkits: string[] | null;
  max_turns: number | null;
  timeout_seconds: number | null;
  category: string | null;
  tags: string[] | null;
  icon: string | null;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
  llm: SkillLlmConfig | null;
  /** What `run_command` may run; null when not narrowed. */
  command_rules: CommandRule[] | null;
  /** Names that were translated, and names that grant nothing. */
  tool_names: { mapped: Record<string, string[]>; unknown: string[] };
}

/**
 * Reads the A2E fields (and the specification's `allowed-tools`).
 *
 * @param fields the frontmatter reader (warnings go there)
 * @returns the fields, with defaults
 * @example A2E's dialect with other runtimes' tool names
 * ```ts
 * import { FieldReader } from "./frontmatter.ts";
 * import { readA2eFields } from "./a2e_dialect.ts";
 * import assert from "node:assert/strict";
 * const f = readA2eFields(new FieldReader({
 *   triggers: ["sum a csv"], argument_hint: "<file>", "user-invocable": true,
 *   tools: ["Read", "Grep"], inputs: { file: { type: "string", required: true } },
 * }));
 * assert.deepEqual(f.tools, ["read_file", "grep"]);
 * assert.equal(f.argument_hint, "<file>");
 * assert.deepEqual(f.input_schema.required, ["file"]);
 * ```
 */
export function readA2eFields(fields: FieldReader): A2eFields {
  const tools = readToolNames(fields, "tools");
  const allowed = readToolNames(fields, "allowed-tools");
  let mapping = null;
  if (tools !== null || allowed !== null) {
    mapping = mapToolNames([...tools ?? [], ...allowed ?? []]);
    if (mapping.unknown.length > 0) {
      fields.warn(
        `tool names skillbox does not know grant nothing: ${
          mapping.unknown.map((n) => `"${n}"`).join(", ")
        }`,
      );
    }
  }
  return {
    version: fields.str("version") ?? "1.0.0",
    triggers: fields.strList("triggers") ?? [],
    when_to_use: fields.str("when_to_use", "when-to-use") ?? "",
    argument_hint: fields.str("argument_hint", "argument-hint") ?? "",
    user_invocable: fields.bool("user-invocable", "user_invocable"),
    tools: mapping?.tools ?? null,
    toolkits: fields.strList("toolkits"),
    max_turns: fields.positive("max_turns", true),
    timeout_seconds: fields.positive("timeout_seconds", false),
    category: fields.str("category"),
    tags: fields.strList("tags"),
    icon: fields.str("icon"),
    input_schema: readSchema(fields, "input_schema", "inputs"),
    output_schema: readSchema(fields, "output_schema", "outputs"),
    llm: readLlm(fields),
    command_rules: mapping?.commandRules ?? null,
    tool_names: {
      mapped: mapping?.mapped ?? {},
      unknown: mapping?.unknown ?? [],
    },
  };
}

function readToolNames(fields: FieldReader, key: string): string[] | null {
  const found = fields.pick(key);
  if (!found) return null;
  if (typeof found.value === "string") return splitToolList(found.value);
  if (
    Array.isArray(found.value) &&
    found.value.every((v) => typeof v === "string")
  ) {
    return found.value.flatMap(splitToolList);
  }
  fields.warn(`field "${key}" must be a list of tool names: ignored`);
  return null;
}

function readSchema(
  fields: FieldReader,
  schemaKey: string,
  mapKey: string,
): JsonSchema {
  const schema = fields.mapping(schemaKey);
  const map = fields.pick(mapKey);
  if (schema !== null) {
    if (map) {
      fields.warn(`field "${mapKey}" is ignored: "${schemaKey}" is given`);
    }
    return schema as JsonSchema;
  }
  if (!map) return {};
  const converted = parameterMapToSchema(map.value, mapKey);
  converted.warnings.forEach((w) => fields.warn(w));
  return converted.schema;
}

function readLlm(fields: FieldReader): SkillLlmConfig | null {
  const found = fields.pick("llm");
  if (!found) return null;
  const value = found.value;
  if (typeof value === "string" && value !== "") {
    return {
      provider_name: value,
      provider_credentials: {},
      provider_config: {},
    };
  }
  const v = typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : null;
  if (v === null || typeof v.provider_name !== "string" || !v.provider_name) {
    fields.warn(
      'field "llm" must be a provider name or a mapping with "provider_name": the host\'s default LLM is used',
    );
    return null;
  }
  const obj = (k: string): JsonObject => {
    const x = v[k];
    if (x === undefined || x === null) return {};
    if (typeof x !== "object" || Array.isArray(x)) {
      fields.warn(`field "llm.${k}" must be a mapping: ignored`);
      return {};
    }
    return x as JsonObject;
  };
  return {
    provider_name: v.provider_name,
    provider_credentials: obj("provider_credentials"),
    provider_config: obj("provider_config"),
  };
}
