/**
 * The static path of discovery: the definitions of a module whose exports
 * are plain literals, read from its syntax tree without running any of its
 * code. Starting a Worker costs about 17 ms of CPU whatever the module does
 * (see the README's discovery section), so a module that only declares a
 * literal (most toolkits, generated tools) is answered in well under a
 * millisecond instead, in the host, with nothing of it evaluated.
 *
 * The answer must be exactly what the module's worker would have answered,
 * so only a small, closed grammar is accepted and anything else returns
 * null (the module then runs in its Worker as before):
 * - statements: `import type`, type declarations (`interface`, `type`,
 *   `declare`), function declarations, `const` with a literal initializer,
 *   `export` of those, `export { a as b }`, `export default <literal>`;
 *   no other import, no re-export, no class, enum, `let` or expression;
 * - literals: strings, numbers (with a sign, also on a number constant), booleans, null, templates
 *   without substitutions, arrays without holes or spreads, objects with
 *   plain keys (no `__proto__`, computed key, getter, setter or spread),
 *   function and arrow expressions and methods (never called), references
 *   to an earlier literal `const` (or a function declaration), `+` on two
 *   strings or numbers, `[...].join(separator)` on primitives, and the TS
 *   wrappers `as`, `satisfies`, `!` and `<T>`.
 * The definition is then computed from these values by a copy of the
 * worker's `describe` (in `sandbox/worker/bootstrap.ts`); whatever could
 * run author code there (a zod schema, `toJSON`, a permission list of
 * objects) returns null. `discovery_static_test.ts` checks the answers
 * against real workers over many shapes.
 *
 * The parser (Babel's, from npm) reads untrusted text in the host: it only
 * builds a tree, never evaluates it, and sources over 64 KiB are not tried.
 *
 * @module
 */

import type { DescribedDefinition } from "./types.ts";

/** Sources longer than this (characters) always run in their Worker. */
export const MAX_STATIC_SOURCE = 64 * 1024;

/** Options of {@link describeStatically}. */
export interface StaticOptions {
  /** Answers longer than this (JSON characters) go to the Worker. */
  maxResultBytes: number;
}

interface AstNode {
  type: string;
  [key: string]: unknown;
}

type Parse = (
  source: string,
  options: { sourceType: "module"; plugins: string[] },
) => { program: AstNode };

let parser: Promise<Parse> | null = null;

// Loaded on the first cold module only: a cached load never pays for it.
function loadParser(): Promise<Parse> {
  parser ??= import("@babel/parser").then((m) => m.parse as unknown as Parse);
  return parser;
}

/** Thrown inside the evaluation: this module needs its Worker. */
class NotStatic extends Error {}

function notStatic(): never {
  throw new NotStatic();
}

/**
 * Reads a module's definitions without running it, when its exports are
 * literals (see the module doc for the accepted grammar).
 *
 * @param path the module's path (`.ts` or `.js` decides the grammar)
 * @param source its text
 * @param options the result bound
 * @returns the definitions its worker's `describe` would give, or null when
 *   that cannot be known without running it
 * @example A literal tool, and one that must run
 * ```ts
 * import { describeStatically } from "./discovery_static.ts";
 * import assert from "node:assert/strict";
 * const limit = { maxResultBytes: 1 << 20 };
 * const defs = await describeStatically("/t.ts",
 *   `export default { kind: "tool", name: "t", run: () => 1 };`, limit);
 * assert.equal(defs?.[0]?.name, "t");
 * assert.equal(defs?.[0]?.runnable, true);
 * assert.equal(await describeStatically("/u.ts",
 *   `export default { kind: "tool", name: String(1) };`, limit), null);
 * ```
 */
export async function describeStatically(
  path: string,
  source: string,
  options: StaticOptions,
): Promise<DescribedDefinition[] | null> {
  const ts = path.endsWith(".ts");
  if (!ts && !path.endsWith(".js")) return null;
  if (source.length > MAX_STATIC_SOURCE) return null;
  const parse = await loadParser();
  try {
    const { program } = parse(source, {
      sourceType: "module",
      plugins: ts ? ["typescript"] : [],
    });
    const described = describeNamespace(evaluate(program));
    const json = JSON.stringify(described);
    if (json.length > options.maxResultBytes) return null;
    return JSON.parse(json) as DescribedDefinition[];
  } catch {
    // A syntax error, a shape outside the grammar, or a tree too deep to
    // walk: the Worker decides (and reports the error, if there is one).
    return null;
  }
}

const ERASED = new Set([
  "TSInterfaceDeclaration",
  "TSTypeAliasDeclaration",
  "TSDeclareFunction",
  "EmptyStatement",
]);

/** The module's namespace: export name to value. */
function evaluate(program: AstNode): Map<string, unknown> {
  const body = program.body as AstNode[];
  const scope = new Scope();
  // Function declarations exist before any statement runs (hoisted).
  for (const statement of body) {
    const declared = statement.type === "ExportNamedDeclaration" ||
        statement.type === "ExportDefaultDeclaration"
      ? statement.declaration as AstNode | null
      : statement;
    if (declared?.type === "FunctionDeclaration" && declared.id) {
      scope.define(name(declared.id), placeholder());
    }
  }
  const exports = new Map<string, unknown>();
  const locals = new Map<string, string>(); // exported name -> local name
  for (const statement of body) {
    switch (statement.type) {
      case "ImportDeclaration":
        if (statement.importKind !== "type") notStatic();
        break;
      case "ExportNamedDeclaration":
        if (statement.exportKind === "type") break;
        if (statement.source) notStatic();
        if (statement.declaration) {
          for (
            const local of declare(statement.declaration as AstNode, scope)
          ) {
            locals.set(local, local);
          }
        }
        for (const spec of statement.specifiers as AstNode[]) {
          if (spec.type !== "ExportSpecifier") notStatic();
          if (spec.exportKind === "type") continue;
          locals.set(exportName(spec.exported as AstNode), name(spec.local));
        }
        break;
      case "ExportDefaultDeclaration": {
        const declaration = statement.declaration as AstNode;
        if (declaration.type === "TSInterfaceDeclaration") break;
        if (declaration.type === "FunctionDeclaration") {
          exports.set(
            "default",
            declaration.id ? scope.get(name(declaration.id)) : placeholder(),
          );
        } else exports.set("default", value(declaration, scope));
        break;
      }
      default:
        declare(statement, scope);
    }
  }
  // Exports are live bindings: read once every statement has run.
  for (const [exported, local] of locals) {
    exports.set(exported, scope.get(local));
  }
  return exports;
}

/** Runs one declaration; returns the names it declared. */
function declare(node: AstNode, scope: Scope): string[] {
  if (ERASED.has(node.type) || node.declare === true) return [];
  if (node.type === "FunctionDeclaration") return [name(node.id)];
  if (node.type !== "VariableDeclaration" || node.kind !== "const") {
    return notStatic();
  }
  return (node.declarations as AstNode[]).map((d) => {
    const id = d.id as AstNode;
    if (id.type !== "Identifier" || !d.init) notStatic();
    scope.define(name(id), value(d.init as AstNode, scope));
    return name(id);
  });
}

/** The module's bindings, defined in evaluation order (no TDZ reads). */
class Scope {
  readonly #values = new Map<string, unknown>();
  define(name: string, value: unknown): void {
    this.#values.set(name, value);
  }
  get(name: string): unknown {
    if (this.#values.has(name)) return this.#values.get(name);
    return notStatic(); // not declared yet (a TDZ error), or not at all
  }
  has(name: string): boolean {
    return this.#values.has(name);
  }
}

const GLOBALS = new Map<string, unknown>([
  ["undefined", undefined],
  ["NaN", NaN],
  ["Infinity", Infinity],
]);

// A distinct function per function expression, as evaluating one makes.
function placeholder(): () => void {
  return () => {};
}

/** The value of a literal expression (see the module doc's grammar). */
function value(node: AstNode, scope: Scope): unknown {
  switch (node.type) {
    case "StringLiteral":
    case "NumericLiteral":
    case "BooleanLiteral":
      return node.value;
    case "NullLiteral":
      return null;
    case "TemplateLiteral": {
      const quasis = node.quasis as AstNode[];
      const cooked = (quasis[0]?.value as { cooked?: unknown })?.cooked;
      if ((node.expressions as unknown[]).length > 0) notStatic();
      return typeof cooked === "string" ? cooked : notStatic();
    }
    case "UnaryExpression": {
      // Only a sign on a number (no conversion that could call code).
      const n = value(node.argument as AstNode, scope);
      if (typeof n !== "number") notStatic();
      return node.operator === "-"
        ? -n
        : node.operator === "+"
        ? n
        : notStatic();
    }
    case "BinaryExpression":
      return concat(node, scope);
    case "CallExpression":
      return join(node, scope);
    case "ArrayExpression":
      return (node.elements as (AstNode | null)[]).map((element) =>
        element === null || element.type === "SpreadElement"
          ? notStatic()
          : value(element, scope)
      );
    case "ObjectExpression":
      return object(node, scope);
    case "ArrowFunctionExpression":
    case "FunctionExpression":
      return placeholder();
    case "Identifier": {
      const id = name(node);
      if (!scope.has(id) && GLOBALS.has(id)) return GLOBALS.get(id);
      return scope.get(id);
    }
    case "TSAsExpression":
    case "TSSatisfiesExpression":
    case "TSTypeAssertion":
    case "TSNonNullExpression":
    case "ParenthesizedExpression":
      return value(node.expression as AstNode, scope);
    default:
      return notStatic();
  }
}

function isPrimitive(v: unknown): v is string | number | boolean | null {
  return v === null || v === undefined ||
    ["string", "number", "boolean"].includes(typeof v);
}

// `a + b` on two strings or numbers: no conversion can call code.
function concat(node: AstNode, scope: Scope): string | number {
  if (node.operator !== "+") notStatic();
  const left = value(node.left as AstNode, scope);
  const right = value(node.right as AstNode, scope);
  const ok = (v: unknown) => typeof v === "string" || typeof v === "number";
  if (!ok(left) || !ok(right)) notStatic();
  return (left as string) + (right as string);
}

// `[...].join(sep)` on primitives, the one call long texts are written
// with. Nothing of the module has run before its literal is evaluated, so
// Array.prototype.join is the builtin in the worker as it is here.
function join(node: AstNode, scope: Scope): string {
  const callee = node.callee as AstNode;
  const args = node.arguments as AstNode[];
  if (
    callee.type !== "MemberExpression" || callee.computed ||
    name(callee.property) !== "join" || args.length > 1
  ) notStatic();
  const list = value(callee.object as AstNode, scope);
  const separator = args[0] ? value(args[0], scope) : ",";
  if (!Array.isArray(list) || !list.every(isPrimitive)) notStatic();
  if (typeof separator !== "string") notStatic();
  return list.join(separator);
}

function object(node: AstNode, scope: Scope): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const property of node.properties as AstNode[]) {
    const method = property.type === "ObjectMethod";
    if (!method && property.type !== "ObjectProperty") notStatic();
    if (method && property.kind !== "method") notStatic(); // get, set
    if (property.computed) notStatic();
    const key = propertyKey(property.key as AstNode);
    // `__proto__: x` sets the prototype; `toJSON` would run in JSON.stringify.
    if (key === "__proto__" || key === "toJSON") notStatic();
    const v = method ? placeholder() : value(property.value as AstNode, scope);
    // A data property, as an object literal defines it (a repeated key
    // keeps its first place and its last value).
    Object.defineProperty(out, key, {
      value: v,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return out;
}

function propertyKey(key: AstNode): string {
  if (key.type === "Identifier") return name(key);
  if (key.type === "StringLiteral") return key.value as string;
  if (key.type === "NumericLiteral") return String(key.value);
  return notStatic();
}

function name(node: unknown): string {
  const n = node as AstNode | null;
  if (n?.type !== "Identifier" || typeof n.name !== "string") notStatic();
  return n.name as string;
}

function exportName(node: AstNode): string {
  if (node.type === "StringLiteral") return node.value as string;
  return name(node);
}

// --- a copy of the worker's describe (sandbox/worker/bootstrap.ts) ---------
// Kept line for line with it, minus what would run author code there.

const KINDS = new Set(["tool", "toolkit", "skill"]);
// deno-fmt-ignore
const SCHEMA_FIELDS = ["input", "output", "input_schema", "output_schema", "config"];

function toJsonSchema(schema: unknown): unknown {
  const zod = typeof schema === "object" && schema !== null &&
    "_zod" in schema;
  if (zod) notStatic(); // zod converts it in the worker
  return JSON.parse(JSON.stringify(schema ?? null));
}

function normalizePermissions(value: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (typeof value !== "object" || value === null) return out;
  for (const [key, list] of Object.entries(value)) {
    if (!Array.isArray(list)) continue;
    // String() of an object or a function would call author code.
    out[key] = list.map((item) =>
      typeof item === "object" && item !== null || typeof item === "function"
        ? notStatic()
        : String(item)
    );
  }
  return out;
}

function describeNamespace(mod: Map<string, unknown>): unknown[] {
  const out: unknown[] = [];
  // A namespace lists its exports sorted by code unit, as Object.keys does.
  const names = [...mod.keys()].sort().sort((a, b) =>
    a === "default" ? -1 : b === "default" ? 1 : a.localeCompare(b)
  );
  for (const exportName of names) {
    const def = mod.get(exportName) as Record<string, unknown> | null;
    if (typeof def !== "object" || def === null) continue;
    if (!KINDS.has(def.kind as string)) continue;
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(def)) {
      if (typeof value === "function") continue;
      if (SCHEMA_FIELDS.includes(key)) {
        fields[key] = toJsonSchema(value);
        continue;
      }
      const json = JSON.stringify(value);
      if (json !== undefined) fields[key] = JSON.parse(json);
    }
    out.push({
      export: exportName,
      kind: def.kind,
      name: typeof def.name === "string" ? def.name : exportName,
      fields,
      permissions: typeof def.permissions === "function"
        ? "dynamic"
        : normalizePermissions(def.permissions),
      runnable: typeof def.run === "function",
    });
  }
  return out;
}
