/**
 * The static path of discovery: the definitions of a module whose code is
 * only declarations of literals, read from its syntax tree without running
 * any of it. Starting a Worker costs about 17 ms of CPU whatever the module
 * does (see the README's discovery section), so such a module (most
 * toolkits, generated tools, tools whose `run` calls local helpers) is
 * answered in well under a millisecond instead, in the host, with nothing
 * of it evaluated.
 *
 * The answer must be exactly what the module's worker would have answered,
 * so only a small, closed grammar is accepted and anything else returns
 * null (the module then runs in its Worker as before):
 * - statements: `import type`, type declarations (`interface`, `type`,
 *   `declare`), function declarations, `const` with a literal initializer,
 *   `export` of those, `export { a as b }`, `export default <literal>`, and
 *   imports of local `.ts`/`.js` files of the module's graph that follow
 *   the same grammar (no cycle, every imported name exported); no other
 *   import, no re-export, no class, enum, `let` or expression;
 * - literals : strings, numbers (with a sign),
 *   booleans, null, templates without substitutions, arrays without holes
 *   or spreads, objects with plain keys (no `__proto__`, computed key,
 *   getter, setter or spread), function and arrow expressions and methods
 *   (never called), references to an earlier `const`, a function or an
 *   import, `+` on two strings or numbers, `[...].join(separator)` on
 *   primitives, and the TS wrappers `as`, `satisfies`, `!` and `<T>`.
 * The definition is then computed from these values by a copy of the
 * worker's `describe`; whatever could run author code there (a zod schema,
 * `toJSON`, a permission list of objects) returns null.
 * `static_test.ts` checks the answers against real workers over
 * many shapes.
 *
 * The parser (Babel's, from npm) reads untrusted text in the host: it only
 * builds a tree, never evaluates it, and graphs over 16 KiB in all are not
 * tried (parsing takes the host's thread, about 2 ms a KiB).
 *
 * @module
 */

import { localTarget } from "./module_graph.ts";
import type { DescribedDefinition } from "../sandbox/types.ts";
import {
  describeExports,
  type DescribeHooks,
} from "../../protocol/describe.ts";

/**
 * Modules whose graph holds more than this (characters, the module and
 * the local files it imports) always run in their Worker. Each describe
 * parses in the host's one thread with no deadline; the shipped modules
 * that take this path are under 10 KB.
 */
export const MAX_STATIC_SOURCE = 16 * 1024;

/** Options of {@link describeStatically}. */
export interface StaticOptions {
  /** Answers longer than this (JSON characters) go to the Worker. */
  maxResultBytes: number;
  /**
   * The text of the local files the module may import (absolute paths),
   * as the host read them for its hash. @default none
   */
  imports?: ReadonlyMap<string, string>;
}

type Parse = (
  source: string,
  options: { sourceType: "module"; plugins: string[] },
) => { program: AstNode };

/**
 * Reads a module's definitions without running it, when its code is only
 * declarations of literals (see the module doc for the accepted grammar).
 *
 * @param path the module's path (`.ts` or `.js` decides the grammar)
 * @param source its text
 * @param options the result bound, and the files it may import
 * @returns the definitions its worker's `describe` would give, or null when
 *   that cannot be known without running it
 * @example A literal tool, and one that must run
 * ```ts
 * import { describeStatically } from "./static.ts";
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
  // Loaded on the first cold module only (and then kept by the module
  // loader): a cached load never pays for it.
  const parse = (await import("@babel/parser")).parse as unknown as Parse;
  const files = new Map(options.imports ?? []);
  files.set(path, source);
  try {
    const graph = new StaticGraph(parse, files, options.maxResultBytes);
    const described = describeNamespace(
      graph.namespace(path),
      options.maxResultBytes,
    );
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

// A namespace import (`import * as ns`) is not a literal: using it is not.
const NAMESPACE = Symbol("namespace");

/** The modules of one graph, each evaluated once, in import order. */
class StaticGraph {
  readonly #parse: Parse;
  readonly #files: ReadonlyMap<string, string>;
  readonly #done = new Map<string, Map<string, unknown>>();
  readonly #evaluating = new Set<string>();
  readonly #maxWeight: number;
  // Characters parsed so far, of every file: a graph of many files each
  // under the bound held the host's thread for tens of seconds.
  #parsed = 0;

  constructor(
    parse: Parse,
    files: ReadonlyMap<string, string>,
    maxWeight: number,
  ) {
    this.#parse = parse;
    this.#files = files;
    this.#maxWeight = maxWeight;
  }

  /** The namespace (export name to value) of one file of the graph. */
  namespace(path: string): Map<string, unknown> {
    const done = this.#done.get(path);
    if (done) return done;
    // A cycle evaluates a module before its imports are done: not here.
    if (this.#evaluating.has(path)) notStatic();
    const source = this.#files.get(path);
    const ts = path.endsWith(".ts");
    if (source === undefined || (!ts && !path.endsWith(".js"))) notStatic();
    this.#parsed += source.length;
    if (this.#parsed > MAX_STATIC_SOURCE) notStatic();
    this.#evaluating.add(path);
    const { program } = this.#parse(source, {
      sourceType: "module",
      plugins: ts ? ["typescript"] : [],
    });
    const namespace = this.#evaluate(path, program);
    this.#evaluating.delete(path);
    this.#done.set(path, namespace);
    return namespace;
  }

  // Runs a module's statements (see the module doc). Imports are linked
  // before any statement runs, as a module's are.
  #evaluate(path: string, program: AstNode): Map<string, unknown> {
    const body = program.body as AstNode[];
    const scope = new Scope(this.#maxWeight);
    for (const statement of body) {
      if (statement.type === "ImportDeclaration") {
        this.#link(path, statement, scope);
      }
      // Function declarations exist before any statement runs (hoisted).
      const declared = statement.type === "ExportNamedDeclaration" ||
          statement.type === "ExportDefaultDeclaration"
        ? statement.declaration as AstNode | null
        : statement;
      if (declared?.type === "FunctionDeclaration" && declared.id) {
        scope.set(name(declared.id), placeholder());
      }
    }
    const exports = new Map<string, unknown>();
    const locals = new Map<string, string>(); // exported name -> local name
    for (const statement of body) {
      if (statement.type === "ImportDeclaration") continue;
      if (statement.type === "ExportNamedDeclaration") {
        if (statement.exportKind === "type") continue;
        if (statement.source) notStatic(); // a re-export
        const declaration = statement.declaration as AstNode | null;
        for (const local of declaration ? declare(declaration, scope) : []) {
          locals.set(local, local);
        }
        for (const spec of statement.specifiers as AstNode[]) {
          if (spec.type !== "ExportSpecifier") notStatic();
          if (spec.exportKind === "type") continue;
          locals.set(
            propertyKey(spec.exported as AstNode),
            name(spec.local),
          );
        }
      } else if (statement.type === "ExportDefaultDeclaration") {
        const declaration = statement.declaration as AstNode;
        if (declaration.type === "TSInterfaceDeclaration") continue;
        exports.set(
          "default",
          declaration.type !== "FunctionDeclaration"
            ? value(declaration, scope)
            : declaration.id
            ? scope.get(name(declaration.id))
            : placeholder(),
        );
      } else declare(statement, scope);
    }
    // Exports are live bindings: read once every statement has run.
    for (const [exported, local] of locals) {
      const value = scope.get(local);
      if (value === NAMESPACE) notStatic();
      exports.set(exported, value);
    }
    return exports;
  }

  // Binds what an import declaration names, from the imported module's
  // namespace (evaluated first). A name it does not export would be a
  // link error in the worker: not static.
  #link(from: string, node: AstNode, scope: Scope): void {
    if (node.importKind === "type") return;
    if ((node.attributes as unknown[] | undefined)?.length) notStatic();
    const specs = node.specifiers as AstNode[];
    const values = specs.filter((s) => s.importKind !== "type");
    // Only type names: whether the import stays is the transpiler's call.
    if (specs.length > 0 && values.length === 0) notStatic();
    // Resolved as module_graph.ts does; npm:, jsr:, a URL, a bare name are
    // not local.
    const target = localTarget(String((node.source as AstNode).value), from) ??
      notStatic();
    const namespace = this.namespace(target);
    for (const spec of values) {
      const local = name(spec.local);
      if (spec.type === "ImportNamespaceSpecifier") {
        scope.set(local, NAMESPACE);
        continue;
      }
      const imported = spec.type === "ImportDefaultSpecifier"
        ? "default"
        : propertyKey(spec.imported as AstNode);
      if (!namespace.has(imported)) notStatic();
      scope.set(local, namespace.get(imported));
    }
  }
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
    scope.set(name(id), value(d.init as AstNode, scope));
    return name(id);
  });
}

// --- the literal grammar -------------------------------------------------

// A node of Babel's syntax tree (only `type` is relied on everywhere).
interface AstNode {
  type: string;
  [key: string]: unknown;
}

// Thrown while evaluating: this module needs its Worker.
class NotStatic extends Error {}

// Gives up on the static path.
function notStatic(): never {
  throw new NotStatic();
}

// A module's bindings, defined in evaluation order: reading one that is not
// defined yet (a TDZ error when run) or at all is not static.
class Scope extends Map<string, unknown> {
  /** @param maxWeight the heaviest value it may make (see {@link weigh}) */
  constructor(readonly maxWeight: number) {
    super();
  }
  override get(name: string): unknown {
    if (this.has(name)) return super.get(name);
    return notStatic(); // not declared yet (a TDZ error), or not at all
  }
}

// The weight of each array and object the evaluator made: about the
// characters of its JSON, its parts counted each time they are named. A
// module of a few lines can name one value 2^40 times (`[a, a]` nested 40 deep,
// `a + a`, `[a, a].join(a)`): serializing or building that would hold the
// host's thread or memory, where a worker is stopped at its deadline. So a
// value heavier than the answer bound gives up as it is made.
const weights = new WeakMap<object, number>();

function weightOf(v: unknown): number {
  if (typeof v === "string") return v.length;
  return typeof v === "object" && v !== null ? weights.get(v) ?? 1 : 1;
}

// Checks a value about to be made against the bound; returns its weight.
function weigh(weight: number, scope: Scope): number {
  return weight > scope.maxWeight ? notStatic() : weight;
}

const GLOBALS = new Map<string, unknown>([
  ["undefined", undefined],
  ["NaN", NaN],
  ["Infinity", Infinity],
]);

// A function standing for one the module declares (never called): a
// distinct one per function expression, as evaluating one makes.
function placeholder(): () => void {
  return () => {};
}

// The value of a literal expression (see the module doc's grammar), as
// evaluating it would give.
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
    case "ArrayExpression": {
      const list = (node.elements as (AstNode | null)[]).map((element) =>
        element === null || element.type === "SpreadElement"
          ? notStatic()
          : value(element, scope)
      );
      let weight = list.length + 2;
      for (const item of list) weight += weightOf(item);
      weights.set(list, weigh(weight, scope));
      return list;
    }
    case "ObjectExpression":
      return object(node, scope);
    case "ArrowFunctionExpression":
    case "FunctionExpression":
      return placeholder();
    case "Identifier": {
      const id = name(node);
      if (!scope.has(id) && GLOBALS.has(id)) return GLOBALS.get(id);
      const bound = scope.get(id);
      // A symbol stands for something that is not a literal (a namespace).
      return typeof bound === "symbol" ? notStatic() : bound;
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
  weigh(weightOf(left) + weightOf(right), scope);
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
  weigh(weightOf(list) + separator.length * list.length, scope);
  return list.join(separator);
}

function object(node: AstNode, scope: Scope): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let weight = 2;
  for (const property of node.properties as AstNode[]) {
    const method = property.type === "ObjectMethod";
    if (!method && property.type !== "ObjectProperty") notStatic();
    if (method && property.kind !== "method") notStatic(); // get, set
    if (property.computed) notStatic();
    const key = propertyKey(property.key as AstNode);
    // `__proto__: x` sets the prototype; `toJSON` would run in JSON.stringify.
    if (key === "__proto__" || key === "toJSON") notStatic();
    const v = method ? placeholder() : value(property.value as AstNode, scope);
    weight = weigh(weight + key.length + weightOf(v) + 4, scope);
    // A data property, as an object literal defines it (a repeated key
    // keeps its first place and its last value).
    Object.defineProperty(out, key, {
      value: v,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  weights.set(out, weight);
  return out;
}

// An object's key, or a name a module imports or exports (`"a b"` in
// `export { x as "a b" }`; the parser refuses a number there).
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

// Where the worker would run author code (zod's conversion, `String()` of an
// object): the static path gives up and the module goes to a worker.
const STATIC_HOOKS: DescribeHooks = {
  zodToJsonSchema: notStatic,
  stringifyObject: notStatic,
};

// What the worker's `describe` returns for a module namespace (before its
// answer is serialized): the same `describeExports`, on the values read
// from the module's syntax.
function describeNamespace(
  mod: Map<string, unknown>,
  maxWeight: number,
): unknown[] {
  // Each export is described (copied) on its own, so the answer weighs
  // what they all weigh: one value under the bound, exported under a
  // thousand names, would be copied a thousand times.
  let weight = 0;
  for (const value of mod.values()) weight += weightOf(value);
  if (weight > maxWeight) notStatic();
  // A namespace lists its exports sorted by code unit, as Object.keys does.
  const names = [...mod.keys()].sort();
  return describeExports(names, (name) => mod.get(name), STATIC_HOOKS);
}
