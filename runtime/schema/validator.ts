/**
 * The one JSON Schema validator of the host: tool arguments, toolkit
 * configurations, skill arguments and outputs are all checked here with
 * `@cfworker/json-schema` (compiled once per schema object, draft chosen from
 * `$schema`). Failures are described by field path without ever quoting the
 * value that failed — the value may be a secret.
 *
 * Schemas come from modules, and values from clients, and all of it is
 * checked on the host's one thread: so each validation is bounded in schema
 * steps ({@link MAX_SCHEMA_STEPS}), and regular expressions (`pattern`,
 * `patternProperties`) run in RE2's linear-time engine (`re2js`), not in
 * JavaScript's backtracking one, where `^(a+)+$` takes 2^n steps to refuse
 * n "a"s and a "!". A pattern RE2 cannot take (lookaround, backreferences)
 * makes its schema one that does not compile, unless it stands beside a
 * `format` the validator checks: zod writes `z.hostname()` as `format:
 * "hostname"` and a lookahead `pattern`; there the format is checked and
 * the pattern is not.
 *
 * @module
 */

import {
  dereference,
  format as FORMATS,
  type OutputUnit,
  type Schema,
  schemaArrayKeyword,
  type SchemaDraft,
  schemaKeyword,
  validate,
} from "@cfworker/json-schema";
import { RE2JS } from "re2js";
import { isPlainObject, pointerSegment } from "../../protocol/json.ts";
import { printableLine } from "../../protocol/lines.ts";
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation";

/** One problem found, by field path. */
export interface ValidationIssue {
  /** Dotted field path (`"filters.0.name"`), or `""` for the value itself. */
  path: string;
  /** What is wrong, never quoting the value (`"must be of type number"`). */
  problem: string;
}

/** The outcome of {@link validateValue}. */
export type ValidationResult =
  | { valid: true }
  | {
    valid: false;
    /**
     * Every issue; or, for a value with more failures than the step bound
     * pays to gather (see {@link MAX_SCHEMA_STEPS}), those of the first
     * failing property or item of each object or array.
     */
    issues: ValidationIssue[];
    /**
     * The issues as one line: `"a.b" is required; "c" must be ...`, the
     * first 20 of them, then `and 1,234 more`.
     */
    message: string;
  };

// A compiled schema: its copy, draft and index as cfworker's validate()
// takes them, whether any of its nodes has
// `uniqueItems`, whose pairs are charged before it runs (see chargePairs),
// when it has patterns, the `RegExp` its validation runs with, and its
// fan-out, which weighs the steps of a full pass (see runValidator).
interface Compiled {
  schema: Schema | boolean;
  draft: SchemaDraft;
  lookup: ReturnType<typeof dereference>;
  uniqueItems: boolean;
  regExp: RegExpConstructor | null;
  // How many subschemas it applies to one value at most (schemaFanOut).
  fanOut: number;
}

const validators = new WeakMap<object, Compiled>();

// Keywords whose error only says "a child failed"; the child says what.
const WRAPPERS = new Set([
  "properties",
  "items",
  "prefixItems",
  "additionalItems",
  "$ref",
  "$dynamicRef",
  "allOf",
  "patternProperties",
  "dependentSchemas",
  "if",
  "then",
  "else",
]);

/**
 * Validates a value against a JSON Schema (drafts 4, 7, 2019-09 and 2020-12,
 * chosen from `$schema`; 2020-12 by default). Compiled validators are cached
 * per schema object.
 *
 * @param schema the JSON Schema
 * @param value the value to check
 * @returns `{valid: true}`, or the issues by field path
 * @throws {TypeError} when the schema itself cannot be compiled
 * @example A missing field and a wrong type
 * ```ts
 * import { validateValue } from "./validator.ts";
 * import assert from "node:assert/strict";
 * const schema = {
 *   type: "object",
 *   properties: { path: { type: "string" }, opts: { type: "object", properties: { limit: { type: "number" } } } },
 *   required: ["path"],
 * };
 * const r = validateValue(schema, { opts: { limit: "ten" } });
 * assert.ok(!r.valid);
 * assert.equal(r.message, '"path" is required; "opts.limit" must be of type number, got string');
 * assert.ok(validateValue(schema, { path: "a.csv" }).valid);
 * ```
 */
export function validateValue(
  schema: Record<string, unknown> | boolean,
  value: unknown,
): ValidationResult {
  const errors = runValidator(compile(schema), value);
  if (errors === null) return { valid: true };
  const issues = typeof errors === "string"
    ? [{ path: "", problem: errors }]
    : describe(errors);
  // The message goes back to the client and into the run history: all of
  // 60,000 failing items would make it megabytes. It is one line, logged
  // and shown in terminals: a key's escape sequences, line breaks and bidi
  // overrides appear escaped.
  const named = issues.slice(0, MESSAGE_ISSUES).map((i) =>
    i.path === "" ? `The value ${i.problem}` : `"${i.path}" ${i.problem}`
  );
  const more = issues.length - named.length;
  if (more > 0) named.push(`and ${more.toLocaleString("en-US")} more`);
  return { valid: false, issues, message: printableLine(named.join("; ")) };
}

// The most issues a validation message names.
const MESSAGE_ISSUES = 20;

/**
 * The host's validator in the shape the MCP SDK's `Client` takes as its
 * `jsonSchemaValidator`: the client checks each structured result of an
 * imported tool against the server's output schema on the host's thread,
 * with Ajv by default, whose work a hostile schema doubles at each level of
 * the value. This one is {@link validateValue}, bounded by
 * {@link MAX_SCHEMA_STEPS}, on the schema as `prepare` gives it.
 *
 * @param prepare turns the server's schema into the one checked
 * @returns the provider to pass as `jsonSchemaValidator`
 * @example Check a structured result
 * ```ts
 * import { mcpSchemaValidator } from "./validator.ts";
 * import assert from "node:assert/strict";
 * const check = mcpSchemaValidator().getValidator({ type: "object", required: ["n"] });
 * assert.equal(check({ n: 1 }).valid, true);
 * assert.equal(check({}).errorMessage, '"n" is required');
 * ```
 */
export function mcpSchemaValidator(
  prepare: (schema: JsonSchemaType) => Record<string, unknown> = (s) => s,
): jsonSchemaValidator {
  return {
    getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
      const checked = prepare(schema);
      return (input) => {
        const result = validateValue(checked, input);
        return result.valid
          ? { valid: true, data: input as T, errorMessage: undefined }
          : { valid: false, data: undefined, errorMessage: result.message };
      };
    },
  };
}

function compile(schema: Record<string, unknown> | boolean): Compiled {
  const cached = typeof schema === "object"
    ? validators.get(schema)
    : undefined;
  if (cached) return cached;
  let compiled: Compiled;
  try {
    // A copy: the validator marks every node it indexes, and the counting
    // below replaces a property; the schema itself is sent to clients.
    const copy = structuredClone(schema) as Schema | boolean;
    const lookup = dereference(copy as Schema);
    const patterns = new Map<string, boolean>();
    const uniqueItems = countApplications(
      copy,
      Object.values(lookup),
      patterns,
    );
    compiled = {
      schema: copy,
      draft: draftOf(schema),
      lookup,
      uniqueItems,
      regExp: linearRegExp(patterns),
      fanOut: schemaFanOut(schema),
    };
  } catch (error) {
    throw new TypeError(`Cannot compile schema: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (typeof schema === "object") validators.set(schema, compiled);
  return compiled;
}

/**
 * The most schema steps one validation may take: a step is one application
 * of an object subschema to a value (cfworker's `validate()` entering it).
 * Past it the value is refused (`The value takes more than 200,000 schema
 * steps to check`) rather than checked: a schema that applies itself twice
 * to the same child doubles its work at every level of the value, and the
 * check runs on the host's thread. A step costs about 0.4–1 µs of CPU here,
 * so a refused value costs at most about 200 ms; an array of 50,000 objects
 * with two checked fields takes 150,001 steps. Gathering a value's failures
 * costs steps too, more the deeper they are: past the bound, a value is
 * described by its first failures only.
 *
 * @example
 * ```ts
 * import { MAX_SCHEMA_STEPS, validateValue } from "./validator.ts";
 * import assert from "node:assert/strict";
 * assert.equal(MAX_SCHEMA_STEPS, 200_000);
 * const numbers = { type: "array", items: { type: "number" } };
 * const r = validateValue(numbers, new Array(MAX_SCHEMA_STEPS).fill(1));
 * assert.equal(r.valid ? "" : r.message, "The value takes more than 200,000 schema steps to check");
 * ```
 */
export const MAX_SCHEMA_STEPS = 200_000;

// Steps taken by the validation under way (see runValidator), and what
// one more step counts for in its current pass.
let steps = 0;
let stepWeight = 1;

// Thrown by a counting getter, through cfworker's validate() (which catches
// nothing), to the validation under way.
const TOO_MANY_STEPS = new Error("Too many schema steps");

const STEPS_PROBLEM = `takes more than ${
  MAX_SCHEMA_STEPS.toLocaleString("en-US")
} schema steps to check`;

const DEEP_PROBLEM = "nests too deep to check";

// cfworker's validate() starts each application of an object schema by
// destructuring its keywords, `$ref` first: an accessor there counts it.
const COUNTED_KEY = "$ref";

// Keywords applying their subschemas to the value itself (not to a child).
const IN_PLACE_LISTS = ["allOf", "anyOf", "oneOf"];
const IN_PLACE = ["not", "if", "then", "else"];
const IN_PLACE_MAPS = ["dependentSchemas", "dependencies"];

// Keywords whose value validate() applies as one schema or as a list of
// schemas (`items` is either): cfworker's own tables, which its
// dereference() walks. Then those whose value is a map of schemas
// validate() applies (cfworker's map table also has `$defs`, which is
// not applied, and lacks `dependencies`).
const CHILD = Object.keys(schemaKeyword);
const CHILD_LISTS = Object.keys(schemaArrayKeyword);
const CHILD_MAPS = [...IN_PLACE_MAPS, "properties", "patternProperties"];

// Gives every object validate() can be applied to a counting accessor: the
// root, every node `$ref`/`$recursiveRef` can reach (whatever `dereference`
// indexed, also under an unknown keyword), and every subschema of those.
// The accessor returns the property's own value and keeps its enumerability,
// so a node also used as a map (`dependencies` is both) reads the same.
// Returns whether any of those nodes has `uniqueItems`, and adds their
// regular expressions to `patterns`: true for one that must be checked,
// false for a `pattern` beside a `format` the validator checks.
function countApplications(
  root: unknown,
  nodes: unknown[],
  patterns: Map<string, boolean>,
): boolean {
  const add = (source: string, strict: boolean) =>
    patterns.set(source, strict || patterns.get(source) === true);
  let uniqueItems = false;
  const todo: unknown[] = [root, ...nodes];
  const seen = new Set<object>();
  while (todo.length > 0) {
    const node = todo.pop();
    if (!isPlainObject(node) || seen.has(node)) continue;
    seen.add(node);
    const s = node as Record<string, unknown>;
    if (s.uniqueItems === true) uniqueItems = true;
    if (typeof s.pattern === "string") {
      const checked = typeof s.format === "string" &&
        Object.hasOwn(FORMATS, s.format);
      add(s.pattern, !checked);
    }
    const keyed = s.patternProperties;
    if (isPlainObject(keyed)) {
      for (const key in keyed) add(key, true);
    }
    for (const key of CHILD) todo.push(s[key]);
    for (const key of CHILD_LISTS) {
      const list = s[key];
      // Not `push(...list)`: a list of a few hundred thousand schemas
      // would pass the engine's limit on arguments.
      if (Array.isArray(list)) { for (const sub of list) todo.push(sub); }
    }
    for (const key of CHILD_MAPS) {
      const map = s[key];
      if (typeof map !== "object" || map === null) continue;
      for (const name in map) todo.push((map as Record<string, unknown>)[name]);
    }
    const own = Object.getOwnPropertyDescriptor(s, COUNTED_KEY);
    if (own !== undefined) {
      Object.defineProperty(s, ORIGINAL, { value: own.value });
    }
    Object.defineProperty(s, COUNTED_KEY, {
      get: countStep,
      enumerable: own?.enumerable ?? false,
      configurable: true,
    });
  }
  return uniqueItems;
}

// The property's own value, for a node that had one.
const ORIGINAL = Symbol("uncounted $ref");

// One getter for every node: a getter per node would give each node its own
// hidden class, and validate()'s keyword reads would all go megamorphic
// (measured: a trivial validation went from 0.9 to 1.7 µs).
function countStep(this: Record<PropertyKey, unknown>): unknown {
  if ((steps += stepWeight) > MAX_SCHEMA_STEPS) throw TOO_MANY_STEPS;
  return this[ORIGINAL];
}

// One validation, with its own step count: the count of a validation that
// (somehow) runs inside another is put back when it ends, thrown or not.
//
// It takes two passes, both within the one step bound. The first stops at
// the first failure of each list of properties or items, so it makes a few
// errors; a valid value needs no other. The second gathers every failure,
// and each error costs too: cfworker copies it into the result of every
// application above it, so n failing items 50 levels deep make 50n copies
// for about n steps (and 100,000 of them overflow the stack in
// `push(...errors)`). So a step of the second pass counts for its errors
// (see ERROR_STEPS), copied through as many levels as applications can
// nest: the value's depth times the schema's fan-out. When the second pass
// goes past the bound, the first one's failures are the answer.
// Returns the errors, or why the value could not be checked at all.
function runValidator(
  compiled: Compiled,
  value: unknown,
): OutputUnit[] | string | null {
  const outer = { steps, stepWeight };
  steps = 0;
  // cfworker builds each pattern with `new RegExp(source, "u")` as it
  // validates, and has no hook for another engine: for the length of this
  // synchronous call, the constructor it finds answers the schema's own
  // patterns with their RE2 matchers (see linearRegExp).
  let native: RegExpConstructor | null = null;
  if (compiled.regExp !== null) {
    native = globalThis.RegExp;
    globalThis.RegExp = compiled.regExp;
  }
  try {
    const first = runPass(compiled, value, true, 1);
    if (first === null) return null;
    try {
      const levels = (depthOf(value) + 1) * compiled.fanOut;
      return runPass(compiled, value, false, 2 * (ERROR_STEPS + levels)) ??
        first;
    } catch (error) {
      if (error !== TOO_MANY_STEPS && !(error instanceof RangeError)) {
        throw error;
      }
      return first;
    }
  } catch (error) {
    // cfworker recurses once or twice a level of the value: a few hundred
    // levels overflow the stack (how many depends on the JIT's state).
    const deep = error instanceof RangeError;
    if (error !== TOO_MANY_STEPS && !deep) throw error;
    return deep ? DEEP_PROBLEM : STEPS_PROBLEM;
  } finally {
    ({ steps, stepWeight } = outer);
    if (native !== null) globalThis.RegExp = native;
  }
}

// What describing one error costs, in steps. A failing step of the
// gathering pass makes about two errors, each described once and copied
// once a level: so it counts for 2 * (ERROR_STEPS + levels). Measured: a
// failing item of a flat array costs what 20 to 30 steps of a valid one do.
const ERROR_STEPS = 8;

function runPass(
  { schema, draft, lookup, uniqueItems }: Compiled,
  value: unknown,
  shortCircuit: boolean,
  weight: number,
): OutputUnit[] | null {
  if (uniqueItems) chargePairs(value);
  stepWeight = weight;
  const result = validate(value, schema, draft, lookup, shortCircuit);
  return result.valid ? null : result.errors;
}

// How many levels of arrays and objects a value nests (0 for a scalar),
// a step per object or array: an in-process caller's value may be a cycle.
function depthOf(value: unknown): number {
  let deepest = 0;
  const todo: [unknown, number][] = [[value, 0]];
  while (todo.length > 0) {
    const [node, depth] = todo.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (++steps > MAX_SCHEMA_STEPS) throw TOO_MANY_STEPS;
    deepest = Math.max(deepest, depth + 1);
    for (const child of Object.values(node)) todo.push([child, depth + 1]);
  }
  return deepest;
}

// A `RegExp` constructor for one schema's validation: its patterns, by
// source, as RE2 matchers (their `test` is what cfworker calls; RE2 reads
// a JavaScript string by code points, as the "u" flag does); any other
// source (a value checked as `format: "regex"` is only compiled) goes to
// the real constructor. Null for a schema without patterns.
function linearRegExp(
  patterns: Map<string, boolean>,
): RegExpConstructor | null {
  if (patterns.size === 0) return null;
  const native = globalThis.RegExp;
  const linear = new Map<string, { test(text: string): boolean }>();
  for (const [source, strict] of patterns) {
    try {
      linear.set(source, RE2JS.compile(toRe2(source)));
    } catch (error) {
      if (!strict) {
        linear.set(source, UNCHECKED);
        continue;
      }
      throw new Error(
        `pattern "${source}" cannot be matched in linear time (lookaround ` +
          `and backreferences cannot): ${(error as Error).message}`,
      );
    }
  }
  return function (source: string, flags?: string) {
    return linear.get(source) ?? new native(source, flags);
  } as unknown as RegExpConstructor;
}

// What JavaScript's `\s` matches ("u" flag): RE2's is ASCII only.
const SPACE =
  "\\t\\n\\v\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}" +
  "\\x{202f}\\x{205f}\\x{3000}\\x{feff}";

// A pattern left to the `format` beside it.
const UNCHECKED = { test: () => true };

// A JSON Schema pattern (ECMA-262, "u" flag) in RE2's syntax, matching
// what JavaScript matches: `\uXXXX` and `\u{X}` become `\x{X}`, `\s`/`\S`
// and `.` get JavaScript's classes (RE2's are narrower or wider), `[^]`
// is any character, and `[\b]`, `\cX` their control characters. Anything
// else RE2 reads as JavaScript does, or refuses (lookaround, backrefs).
function toRe2(source: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      const next = source[i + 1] ?? "";
      i++;
      if (next === "u") {
        const braced = source[i + 1] === "{";
        const end = braced ? source.indexOf("}", i) : i + 5;
        const hex = source.slice(i + (braced ? 2 : 1), end);
        if (/^[0-9a-fA-F]{1,6}$/.test(hex) && (braced || hex.length === 4)) {
          out += `\\x{${hex}}`;
          i = braced ? end : end - 1;
          continue;
        }
      } else if (next === "s") {
        out += inClass ? SPACE : `[${SPACE}]`;
        continue;
      } else if (next === "S" && !inClass) {
        out += `[^${SPACE}]`;
        continue;
      } else if (next === "b" && inClass) {
        out += "\\x{8}";
        continue;
      } else if (next === "c" && /^[A-Za-z]$/.test(source[i + 1] ?? "")) {
        out += `\\x{${(source.charCodeAt(++i) % 32).toString(16)}}`;
        continue;
      }
      out += c + next;
    } else if (inClass) {
      if (c === "]") inClass = false;
      out += c;
    } else if (c === "[") {
      if (source.startsWith("[^]", i)) {
        out += "(?s:.)";
        i += 2;
        continue;
      }
      inClass = true;
      out += c;
      // A "]" right after "[" or "[^" closes an empty class in JavaScript.
      if (source[i + 1] === "^") out += source[++i];
    } else if (c === ".") {
      out += "[^\\n\\r\\x{2028}\\x{2029}]";
    } else {
      out += c;
    }
  }
  return out;
}

/**
 * Why a schema's regular expressions cannot all be matched in linear time:
 * the first `pattern` or `patternProperties` key that RE2 does not take
 * (lookaround, backreferences), or null. A `pattern` beside a `format` the
 * validator checks is not one: the format is checked in its place. The
 * registry refuses a module with such a schema at load; validating against
 * it would throw.
 *
 * @param schema the JSON Schema
 * @returns the problem, naming the pattern, or null
 * @example A lookahead is refused, a plain pattern is not
 * ```ts
 * import { slowPattern } from "./validator.ts";
 * import assert from "node:assert/strict";
 * assert.equal(slowPattern({ type: "string", pattern: "^(a+)+$" }), null);
 * assert.match(slowPattern({ properties: { s: { pattern: "^(?=a)b" } } })!, /"\^\(\?=a\)b"/);
 * assert.equal(slowPattern({ format: "hostname", pattern: "^(?=.{1,253}$)[a-z.]+$" }), null);
 * ```
 */
export function slowPattern(schema: Record<string, unknown>): string | null {
  const refs = schemaRefs(schema);
  if (refs === null) return null; // not compilable: the validator says so
  const patterns = new Map<string, boolean>();
  countApplications(refs.root, refs.nodes, patterns);
  try {
    linearRegExp(patterns);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

// What `uniqueItems` costs is not a step: cfworker compares every ordered
// pair of an array's items inside one (20,000 distinct numbers: about
// 340 ms). So a schema with `uniqueItems` anywhere is charged, before it
// runs, for every array of the value as if it were checked: n(n-1) pairs at
// about 1 ns a pair of plain values, or 35 ns a node of an item when an item
// is an object or array (measured: 35-40 ns for `{id}`, 174 ns for five
// fields), at 1 µs a step. Where the `uniqueItems` applies is known only
// while validating, so an array it does not apply to is charged too.
function chargePairs(value: unknown): number {
  if (typeof value !== "object" || value === null) return 1;
  let nodes = 1;
  if (Array.isArray(value)) {
    let deep = false;
    for (const item of value) {
      if (typeof item === "object" && item !== null) deep = true;
      nodes += chargePairs(item);
    }
    const n = value.length;
    const pairNs = deep ? 35 * (nodes - 1) / n : 1;
    steps += Math.ceil(n * (n - 1) * pairNs / 1000);
    if (steps > MAX_SCHEMA_STEPS) throw TOO_MANY_STEPS;
  } else {
    for (const key in value) {
      nodes += chargePairs((value as Record<string, unknown>)[key]);
    }
  }
  return nodes;
}

function draftOf(schema: unknown): SchemaDraft {
  const uri = isPlainObject(schema) ? String(schema.$schema ?? "") : "";
  if (uri.includes("draft-04")) return "4";
  if (uri.includes("draft-07") || uri.includes("draft-06")) return "7";
  if (uri.includes("2019-09")) return "2019-09";
  return "2020-12";
}

// A keyword location in the tree of an error list's locations, one node
// per `/`-separated segment.
interface LocationNode {
  parent: LocationNode | null;
  children: Map<string, LocationNode>;
  // An error of a union (`anyOf`, `oneOf`, `not`) is at this location.
  union: boolean;
}

function describe(errors: OutputUnit[]): ValidationIssue[] {
  // Locations, as a client's value can fail a hundred thousand times, each
  // a location as long as the value is deep: walked segment by segment,
  // never compared or hashed whole for each of their ancestors.
  const grow = (parent: LocationNode | null): LocationNode => ({
    parent,
    children: new Map(),
    union: false,
  });
  const root = grow(null);
  // Most errors share a location with others (every item of an array).
  const located = new Map<string, LocationNode>();
  const nodes = errors.map((error) => {
    let node = located.get(error.keywordLocation);
    if (!node) {
      node = root;
      for (const segment of error.keywordLocation.split("/")) {
        let child = node.children.get(segment);
        if (!child) node.children.set(segment, child = grow(node));
        node = child;
      }
      located.set(error.keywordLocation, node);
    }
    if (["anyOf", "oneOf", "not"].includes(error.keyword)) node.union = true;
    return node;
  });
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const [i, error] of errors.entries()) {
    const node = nodes[i]!;
    // A union failing says so once; the reasons each branch failed are noise.
    let inUnion = false;
    for (let up = node.parent; up && !inUnion; up = up.parent) {
      inUnion = up.union;
    }
    if (inUnion) continue;
    // A wrapper with an error under it: that error says what failed.
    if (WRAPPERS.has(error.keyword) && node.children.size > 0) continue;
    // `additionalProperties: false` also reports each extra property as a
    // failed `false` schema; the additionalProperties error already says it.
    if (error.keyword === "false" && errors.length > 1) continue;
    const issue = toIssue(error);
    const key = `${issue.path}\u0000${issue.problem}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues.length > 0
    ? issues
    : [{ path: "", problem: "does not match the schema" }];
}

function toIssue(error: OutputUnit): ValidationIssue {
  const path = pointerToPath(error.instanceLocation);
  const text = error.error;
  const named = /"([^"]*)"/.exec(text)?.[1] ?? "";
  const join = (name: string) => path === "" ? name : `${path}.${name}`;
  switch (error.keyword) {
    case "type": {
      const expected =
        /Expected (.+)\.$/.exec(text)?.[1]?.replaceAll('"', "") ??
          "another type";
      const got = /Instance type "([^"]+)"/.exec(text)?.[1];
      return {
        path,
        problem: `must be of type ${expected}${got ? `, got ${got}` : ""}`,
      };
    }
    case "required":
      return { path: join(named), problem: "is required" };
    case "additionalProperties":
    case "unevaluatedProperties":
      return { path: join(named), problem: "is not allowed" };
    case "enum":
      return {
        path,
        problem: `must be one of ${
          text.replace(/^.*any of /, "").replace(/\.$/, "")
        }`,
      };
    case "const":
      return {
        path,
        problem: `must be ${
          text.replace(/^Instance does not match /, "").replace(/\.$/, "")
        }`,
      };
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
    case "multipleOf":
      // cfworker starts these messages with the value itself: drop it.
      return {
        path,
        problem: text.replace(/^.*? is /, "is ").replace(/\.$/, "").replace(
          / {2,}/g,
          " ",
        ),
      };
    case "anyOf":
      return { path, problem: "does not match any of the allowed schemas" };
    case "oneOf":
      return {
        path,
        problem: "does not match exactly one of the allowed schemas",
      };
    case "not":
      return { path, problem: "matches a schema it must not match" };
    case "false":
      return { path, problem: "is not allowed" };
    default:
      return {
        path,
        problem: text.replace(/^Instance /, "").replace(/^String /, "")
          .replace(/^Array /, "").replace(/\.$/, "").replace(
            /^./,
            (c) => c.toLowerCase(),
          ),
      };
  }
}

function pointerToPath(pointer: string): string {
  const trimmed = pointer.replace(/^#\/?/, "");
  if (trimmed === "") return "";
  return trimmed.split("/").map(pointerSegment).join(".");
}

/** A schema's copy whose references resolve as the validator's do. */
export interface SchemaRefs {
  /** The copy, to walk in place of the schema. */
  root: Record<string, unknown>;
  /** Every node of the copy a reference can name (the validator's index). */
  nodes: unknown[];
  /**
   * The nodes a node of the copy names by `$ref` and `$recursiveRef`
   * (undefined for a name the validator cannot resolve either).
   */
  refsOf(node: Record<string, unknown>): unknown[];
}

/**
 * Resolves a schema's references the way the validator does: against
 * `$id` bases, to `$anchor`s, through `~` and percent escapes. Anything
 * else that follows `$ref`s (secret fields, fan-out) should use it, or it
 * may miss a subschema the validator applies. Works on a copy (resolving
 * marks nodes).
 *
 * @param schema a JSON Schema
 * @returns the copy and its references, or null when the validator cannot
 * index the schema either (two nodes with one `$id`, a malformed URI): it
 * then refuses every value, so there is nothing to follow
 * @example Follow an escaped pointer and an anchor
 * ```ts
 * import { schemaRefs } from "./validator.ts";
 * import assert from "node:assert/strict";
 * const refs = schemaRefs({
 *   properties: { a: { $ref: "#/$defs/api%20key" }, b: { $ref: "#pin" } },
 *   $defs: { "api key": { type: "string" }, pin: { $anchor: "pin", type: "number" } },
 * })!;
 * const { a, b } = refs.root.properties as Record<string, Record<string, unknown>>;
 * assert.deepEqual(refs.refsOf(a!), [{ type: "string" }]);
 * assert.deepEqual(refs.refsOf(b!), [{ $anchor: "pin", type: "number" }]);
 * ```
 */
export function schemaRefs(schema: Record<string, unknown>): SchemaRefs | null {
  const root = structuredClone(schema);
  let lookup: Record<string, unknown>;
  try {
    lookup = dereference(root as Schema);
  } catch {
    return null;
  }
  return {
    root,
    nodes: Object.values(lookup),
    refsOf(node) {
      const targets: unknown[] = [];
      if (typeof node.$ref === "string") {
        targets.push(lookup[String(node.__absolute_ref__ ?? node.$ref)]);
      }
      if (typeof node.$recursiveRef === "string") {
        targets.push(
          lookup[String(node.__absolute_recursive_ref__ ?? node.$recursiveRef)],
        );
      }
      return targets;
    },
  };
}

/**
 * The most subschemas {@link schemaFanOut} counts: a schema applying more to
 * one value is refused by the registry.
 *
 * @example
 * ```ts
 * import { MAX_FAN_OUT } from "./validator.ts";
 * import assert from "node:assert/strict";
 * assert.equal(MAX_FAN_OUT, 1000);
 * ```
 */
export const MAX_FAN_OUT = 1000;

/**
 * How many subschemas a schema applies to one value at most, through
 * `allOf`/`anyOf`/`oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas` and
 * `$ref`, counted with repeats: the validator checks every branch (it
 * gathers every error), so thirty definitions each `anyOf` the one before
 * twice make 2^30 checks of every value, on the host's thread. Subschemas
 * applied to a child of the value (`properties`, `items`, ...) start a new
 * count. Saturates at {@link MAX_FAN_OUT} + 1, also for a schema that
 * applies itself to the same value (a loop the validator never leaves).
 *
 * @param schema a JSON Schema
 * @returns the count, at most `MAX_FAN_OUT + 1`
 * @example Branches counted with repeats
 * ```ts
 * import { MAX_FAN_OUT, schemaFanOut } from "./validator.ts";
 * import assert from "node:assert/strict";
 * const string = { type: "string" };
 * assert.equal(schemaFanOut({ anyOf: [string, { allOf: [string] }] }), 4);
 * assert.equal(schemaFanOut({ not: { $ref: "#" } }), MAX_FAN_OUT + 1);
 * ```
 */
export function schemaFanOut(
  schema: Record<string, unknown> | boolean,
): number {
  if (typeof schema !== "object" || schema === null) return 1;
  const cap = MAX_FAN_OUT + 1;
  const refs = schemaRefs(schema);
  if (refs === null) return 1; // not compilable: the validator says so itself
  const memo = new Map<object, number>();
  const open = new Set<object>();
  const count = (node: unknown): number => {
    if (!isPlainObject(node)) return 1;
    const known = memo.get(node);
    if (known !== undefined) return known;
    if (open.has(node)) return cap;
    open.add(node);
    const s = node as Record<string, unknown>;
    let total = 1;
    const add = (sub: unknown) => {
      total = Math.min(cap, total + count(sub));
    };
    for (const key of IN_PLACE_LISTS) {
      const list = s[key];
      if (Array.isArray(list)) list.forEach(add);
    }
    for (const key of IN_PLACE) if (key in s) add(s[key]);
    for (const key of IN_PLACE_MAPS) {
      const map = s[key];
      if (typeof map !== "object" || map === null) continue;
      for (const sub of Object.values(map)) if (!Array.isArray(sub)) add(sub);
    }
    for (const target of refs.refsOf(s)) add(target);
    open.delete(node);
    memo.set(node, total);
    return total;
  };
  let most = 0;
  try {
    for (const node of refs.nodes) {
      most = Math.max(most, count(node));
      if (most >= cap) break;
    }
  } catch {
    return cap; // a chain of `$ref`s too long to follow
  }
  return most;
}
