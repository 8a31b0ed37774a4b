/**
 * The literal grammar of discovery's static path (see `discovery_static.ts`)
 * and the worker's own `describe` (`protocol/describe.ts`) run on
 * such values. Nothing here evaluates author code: values are built from
 * Babel's syntax tree, and functions the module declares are stood for by
 * placeholders that are never called.
 *
 * @module
 */

import {
  describeExports,
  type DescribeHooks,
} from "../../protocol/describe.ts";

/** A node of Babel's syntax tree (only `type` is relied on everywhere). */
export interface AstNode {
  type: string;
  [key: string]: unknown;
}

/** Thrown while evaluating: this module needs its Worker. */
export class NotStatic extends Error {}

/**
 * Gives up on the static path.
 *
 * @returns never
 * @throws {NotStatic} always
 * @example Gives up on reading a module from its syntax
 * ```ts
 * import { NotStatic, notStatic } from "./discovery_literal.ts";
 * import assert from "node:assert/strict";
 * assert.throws(() => notStatic(), NotStatic);
 * ```
 */
export function notStatic(): never {
  throw new NotStatic();
}

/**
 * A module's bindings, defined in evaluation order: reading one that is
 * not defined yet (a TDZ error when run) or at all throws {@link NotStatic}.
 *
 * @example Define, then read
 * ```ts
 * import { Scope } from "./discovery_literal.ts";
 * import assert from "node:assert/strict";
 * const scope = new Scope();
 * scope.define("a", 1);
 * assert.equal(scope.get("a"), 1);
 * assert.throws(() => scope.get("b"));
 * ```
 */
export class Scope {
  readonly #values = new Map<string, unknown>();
  /**
   * Binds a name.
   *
   * @param name the binding
   * @param value its value
   */
  define(name: string, value: unknown): void {
    this.#values.set(name, value);
  }
  /**
   * Reads a binding.
   *
   * @param name the binding
   * @returns its value
   * @throws {NotStatic} when it is not defined (yet)
   */
  get(name: string): unknown {
    if (this.#values.has(name)) return this.#values.get(name);
    return notStatic(); // not declared yet (a TDZ error), or not at all
  }
  /**
   * Whether a name is bound.
   *
   * @param name the binding
   * @returns true when defined
   */
  has(name: string): boolean {
    return this.#values.has(name);
  }
}

const GLOBALS = new Map<string, unknown>([
  ["undefined", undefined],
  ["NaN", NaN],
  ["Infinity", Infinity],
]);

/**
 * A function standing for one the module declares (never called): a
 * distinct one per function expression, as evaluating one makes.
 *
 * @returns a new function
 * @example A fresh function each time
 * ```ts
 * import { placeholder } from "./discovery_literal.ts";
 * import assert from "node:assert/strict";
 * assert.notEqual(placeholder(), placeholder());
 * ```
 */
export function placeholder(): () => void {
  return () => {};
}

/**
 * The value of a literal expression (see the module doc's grammar).
 *
 * @param node an expression of Babel's tree
 * @param scope the module's bindings so far
 * @returns its value, as evaluating it would give
 * @throws {NotStatic} for anything outside the grammar
 * @example A negative number
 * ```ts
 * import { literalValue, Scope } from "./discovery_literal.ts";
 * import assert from "node:assert/strict";
 * const node = { type: "UnaryExpression", operator: "-",
 *   argument: { type: "NumericLiteral", value: 2 } };
 * assert.equal(literalValue(node, new Scope()), -2);
 * ```
 */
export function literalValue(node: AstNode, scope: Scope): unknown {
  return value(node, scope);
}

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

/**
 * The name of an identifier node.
 *
 * @param node a node expected to be an `Identifier`
 * @returns its name
 * @throws {NotStatic} when it is not one
 * @example The name of a plain binding
 * ```ts
 * import { bindingName } from "./discovery_literal.ts";
 * import assert from "node:assert/strict";
 * assert.equal(bindingName({ type: "Identifier", name: "a" }), "a");
 * ```
 */
export function bindingName(node: unknown): string {
  return name(node);
}

function name(node: unknown): string {
  const n = node as AstNode | null;
  if (n?.type !== "Identifier" || typeof n.name !== "string") notStatic();
  return n.name as string;
}

// --- the worker's describe, with author code refused -----------------------

// Where the worker would run author code (zod's conversion, `String()` of an
// object): the static path gives up and the module goes to a worker.
const STATIC_HOOKS: DescribeHooks = {
  zodToJsonSchema: notStatic,
  stringifyObject: notStatic,
};

/**
 * What the worker's `describe` returns for a module namespace (before its
 * answer is serialized): the same `describeExports`, on the values read
 * from the module's syntax.
 *
 * @param mod export name to value
 * @returns the definitions
 * @throws {NotStatic} where the worker would run author code
 * @example A tool and a plain value
 * ```ts
 * import { describeNamespace } from "./discovery_literal.ts";
 * import assert from "node:assert/strict";
 * const defs = describeNamespace(new Map<string, unknown>([
 *   ["default", { kind: "tool", name: "t", run: () => 1 }], ["n", 1],
 * ]));
 * assert.deepEqual(defs, [{ export: "default", kind: "tool", name: "t",
 *   fields: { kind: "tool", name: "t" }, permissions: {}, runnable: true }]);
 * ```
 */
export function describeNamespace(mod: Map<string, unknown>): unknown[] {
  // A namespace lists its exports sorted by code unit, as Object.keys does.
  const names = [...mod.keys()].sort();
  return describeExports(names, (name) => mod.get(name), STATIC_HOOKS);
}
