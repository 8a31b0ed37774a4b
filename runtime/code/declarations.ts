/**
 * TypeScript declarations of what code mode's `tools` and `skills` globals
 * hold: one typed function per tool or skill, its argument type read from
 * its input JSON Schema and its result type from its output schema
 * (`unknown` when it has none), its description as a doc comment.
 *
 * Pure: schemas in, text out. The schemas are the tools' authors' (or an
 * imported MCP server's), so nothing in them is trusted: names that are not
 * identifiers are quoted, comments cannot be closed from inside, a `$ref`
 * cycle cannot loop, and every schema is rendered within a budget (depth,
 * properties per object, schema nodes per function, characters in all),
 * with a comment where something was cut. The text always compiles.
 *
 * A `$ref` names the subschema the validator applies for it (a JSON
 * pointer, an `$anchor`, against the `$id` bases it stands under; see
 * `schemaRefs`). It becomes a named type alias when it stands under a
 * property or an array (where TypeScript allows a type to refer to itself),
 * and is inlined elsewhere; a reference back to a schema being inlined is
 * `unknown`, and so is one the validator cannot resolve either.
 *
 * @module
 */

import { isPlainObject, pointerSegment } from "../../protocol/json.ts";
import { schemaRefs, validateValue } from "../schema/validator.ts";

/** A tool or skill to declare. */
export interface DeclaredFunction {
  /** The name it is called by (`tools.<name>`). */
  name: string;
  /** What it does; becomes its doc comment. */
  description: string;
  /** JSON Schema of its arguments. */
  inputSchema: unknown;
  /** JSON Schema of the data it resolves to; `{}` or absent: `unknown`. */
  outputSchema?: unknown;
}

/** Bounds of {@link renderDeclarations}. */
export interface DeclarationLimits {
  /** Properties of one object before the rest are cut. @default 100 */
  maxProperties?: number;
  /** Schema nodes rendered per function (its aliases included). @default 2000 */
  maxNodes?: number;
  /**
   * Characters of the whole text; later functions are left out, and one
   * whose schemas render longer is never rendered whole. @default 262144
   */
  maxChars?: number;
}

/** What to declare. */
export interface DeclarationInput {
  /** The session's tools, in the order to print them. */
  tools: readonly DeclaredFunction[];
  /** The session's skills, in the order to print them. */
  skills: readonly DeclaredFunction[];
  /** Lines for the header comment (untrusted text is made safe). */
  header?: readonly string[];
  /** Lines for a closing comment (untrusted text is made safe). */
  notes?: readonly string[];
}

/** The declarations, and what they hold. */
export interface Declarations {
  /** TypeScript text: aliases, then `declare const tools` and `skills`. */
  text: string;
  /** Names of the tools declared. */
  tools: string[];
  /** Names of the skills declared. */
  skills: string[];
  /** Tools and skills left out to keep within `maxChars`. */
  omitted: number;
}

// Characters left below which a function that does not fit ends the
// list: the rest are counted, not rendered.
const FULL = 4096;

// Nesting levels of a type before it is cut to `unknown`.
const MAX_DEPTH = 12;

// Members of one enum before it is cut to its base type.
const MAX_ENUM = 100;

// Characters of a function's description kept, and of a property's: a
// hundred properties must not fill the text.
const FUNCTION_DOC = 2000;
const PROPERTY_DOC = 500;

const DEFAULTS: Required<DeclarationLimits> = {
  maxProperties: 100,
  maxNodes: 2000,
  maxChars: 256 * 1024,
};

/**
 * Renders the declarations of `tools` and `skills`.
 *
 * @param input the tools and skills, and comment lines
 * @param limits the bounds (see {@link DeclarationLimits})
 * @returns the text and what it declares
 * @example One tool
 * ```ts
 * import { renderDeclarations } from "./declarations.ts";
 * import assert from "node:assert/strict";
 * const { text, tools } = renderDeclarations({
 *   tools: [{
 *     name: "add",
 *     description: "Adds two numbers",
 *     inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a"] },
 *     outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
 *   }],
 *   skills: [],
 * });
 * assert.deepEqual(tools, ["add"]);
 * assert.match(text, /add: \(args: \{\n\s+a: number;\n\s+b\?: number;\n\s+\}\) => Promise<\{\n\s+sum: number;\n\s+\}>;/);
 * ```
 */
export function renderDeclarations(
  input: DeclarationInput,
  limits: DeclarationLimits = {},
): Declarations {
  const bounds = { ...DEFAULTS, ...limits };
  const names = new Set<string>();
  const kept = {
    tools: [] as RenderedFunction[],
    skills: [] as RenderedFunction[],
  };
  let used = 0;
  let omitted = 0;
  // Skills first: there are few, and a registry of thousands of tools must
  // not crowd them out.
  for (const group of ["skills", "tools"] as const) {
    const list = input[group];
    for (let i = 0; i < list.length; i++) {
      const rendered = renderFunction(list[i]!, group, bounds, names);
      // One too long is left out without its text being built whole.
      const size = rendered.tooLong
        ? Infinity
        : rendered.member.length + rendered.aliases.join("").length;
      if (used + size > bounds.maxChars) {
        for (const alias of rendered.aliasNames) names.delete(alias);
        if (bounds.maxChars - used < FULL) {
          omitted += list.length - i;
          break;
        }
        omitted++;
        continue;
      }
      used += size;
      kept[group].push(rendered);
    }
  }
  const aliases = [...kept.tools, ...kept.skills].flatMap((f) => f.aliases);
  const out: string[] = [];
  const header = input.header ?? [];
  if (header.length > 0) out.push(blockComment(header), "");
  if (aliases.length > 0) out.push(aliases.join("\n"), "");
  out.push(constBlock("tools", kept.tools), "");
  out.push(constBlock("skills", kept.skills));
  const notes = [...(input.notes ?? [])];
  if (omitted > 0) {
    notes.push(
      `${omitted} more left out to keep this under ${bounds.maxChars} characters: narrow it with a query.`,
    );
  }
  if (notes.length > 0) out.push("", blockComment(notes));
  return {
    text: out.join("\n") + "\n",
    tools: kept.tools.map((f) => f.name),
    skills: kept.skills.map((f) => f.name),
    omitted,
  };
}

function constBlock(name: string, kept: readonly RenderedFunction[]): string {
  return kept.length === 0
    ? `declare const ${name}: {};`
    : `declare const ${name}: {\n${kept.map((f) => f.member).join("\n")}\n};`;
}

interface RenderedFunction {
  /** The name it is called by. */
  name: string;
  /** Its line(s) in the `declare const` block. */
  member: string;
  /** The type aliases it needs. */
  aliases: string[];
  /** The names of those aliases. */
  aliasNames: string[];
  /** Whether its schemas render longer than `maxChars` (then cut short). */
  tooLong: boolean;
}

function renderFunction(
  fn: DeclaredFunction,
  group: "tools" | "skills",
  bounds: Required<DeclarationLimits>,
  names: Set<string>,
): RenderedFunction {
  const owner = `${group === "tools" ? "" : "skill_"}${fn.name}`;
  const input = new Renderer(fn.inputSchema, owner, bounds, names);
  const args = input.type(fn.inputSchema, "  ", []);
  const optional = acceptsNoArgs(fn.inputSchema);
  const outputSchema = fn.outputSchema ?? {};
  const output = new Renderer(outputSchema, `${owner}_result`, bounds, names);
  const result = output.type(outputSchema, "  ", []);
  const doc = docComment(fn.description, "  ", FUNCTION_DOC);
  const member = `${doc}  ${key(fn.name)}: (args${
    optional ? "?" : ""
  }: ${args.text}) => Promise<${result.text}>;`;
  return {
    name: fn.name,
    member,
    tooLong: input.tooLong || output.tooLong,
    aliases: [...input.aliases, ...output.aliases],
    aliasNames: [...input.names, ...output.names],
  };
}

// A rendered type and how tightly it binds: a union (0), an intersection
// (1), or a primary type (2) that `[]` may follow.
interface Rendered {
  text: string;
  prec: 0 | 1 | 2;
}

const UNKNOWN: Rendered = { text: "unknown", prec: 2 };

function cut(why: string): Rendered {
  return { text: `unknown /* cut: ${why} */`, prec: 2 };
}

// One function's schemas: its aliases (one per `$ref` target that stands
// under a property or array) and its budget of schema nodes.
class Renderer {
  readonly #root: unknown;
  // Resolved on the first `$ref` met: most schemas have none, and copying
  // and indexing every schema would be most of the rendering's time.
  #targetOf?: (node: Record<string, unknown>) => unknown;
  readonly aliases: string[] = [];
  readonly names: string[] = [];
  #owner: string;
  #bounds: Required<DeclarationLimits>;
  #taken: Set<string>;
  #aliasOf = new Map<unknown, string>();
  #nodes = 0;
  // Characters of names, literals and docs rendered: a text is made of
  // them, and an inlined `$ref` renders its target's again.
  #chars = 0;

  /** Whether what it rendered outgrew `maxChars` (then it was cut). */
  get tooLong(): boolean {
    return this.#chars > this.#bounds.maxChars;
  }

  // Counts a piece of text against the budget, and returns it.
  #spend<T extends string | Rendered>(piece: T): T {
    this.#chars += typeof piece === "string" ? piece.length : piece.text.length;
    return piece;
  }

  constructor(
    root: unknown,
    owner: string,
    bounds: Required<DeclarationLimits>,
    taken: Set<string>,
  ) {
    this.#root = root;
    this.#owner = owner;
    this.#bounds = bounds;
    this.#taken = taken;
  }

  // `chain`: the `$ref` targets being inlined here; `guarded`: this position is
  // under a property or an array, where an alias may refer to itself.
  type(
    schema: unknown,
    indent: string,
    chain: readonly unknown[],
    guarded = false,
  ): Rendered {
    if (++this.#nodes > this.#bounds.maxNodes) {
      return cut(`more than ${this.#bounds.maxNodes} schema nodes`);
    }
    if (this.tooLong) {
      return cut(`longer than ${this.#bounds.maxChars} characters`);
    }
    if (indent.length / 2 > MAX_DEPTH) {
      return cut(`nested deeper than ${MAX_DEPTH} levels`);
    }
    if (schema === false) return { text: "never", prec: 2 };
    if (!isPlainObject(schema)) return UNKNOWN;
    if (typeof schema.$ref === "string") {
      return this.#ref(schema, indent, chain, guarded);
    }
    const parts: Rendered[] = [];
    const base = this.#base(schema, indent, chain);
    if (base !== null) parts.push(base);
    for (const word of ["anyOf", "oneOf"]) {
      const list = schema[word];
      if (!Array.isArray(list) || list.length === 0) continue;
      parts.push(union(list.map((s) => this.type(s, indent, chain, guarded))));
    }
    if (Array.isArray(schema.allOf)) {
      for (const s of schema.allOf) {
        parts.push(this.type(s, indent, chain, guarded));
      }
    }
    const known = parts.filter((p) => p.text !== "unknown");
    let out: Rendered = known.length === 0
      ? UNKNOWN
      : known.length === 1
      ? known[0]!
      : {
        text: known.map((p) => p.prec === 0 ? `(${p.text})` : p.text).join(
          " & ",
        ),
        prec: 1,
      };
    if (schema.nullable === true && out.text !== "unknown") {
      out = union([out, { text: "null", prec: 2 }]);
    }
    return out;
  }

  // The schema's own type: const, enum, or its `type` keyword(s).
  #base(
    schema: Record<string, unknown>,
    indent: string,
    chain: readonly unknown[],
  ): Rendered | null {
    if ("const" in schema) return this.#spend(literal(schema.const));
    // An enum past the bound falls through to its base type.
    if (
      Array.isArray(schema.enum) && schema.enum.length <= MAX_ENUM
    ) {
      // Member by member: one enum may be megabytes of text.
      const members: Rendered[] = [];
      for (const member of schema.enum) {
        if (this.tooLong) return UNKNOWN; // its function is left out
        members.push(this.#spend(literal(member)));
      }
      return members.length === 0 ? { text: "never", prec: 2 } : union(members);
    }
    const types = typeof schema.type === "string"
      ? [schema.type]
      : Array.isArray(schema.type)
      ? schema.type.filter((t): t is string => typeof t === "string")
      : [];
    if (types.length === 0) {
      if (
        isPlainObject(schema.properties) || "additionalProperties" in schema ||
        isPlainObject(schema.patternProperties)
      ) {
        types.push("object");
      } else if ("items" in schema || Array.isArray(schema.prefixItems)) {
        types.push("array");
      } else return null;
    }
    const out: Rendered[] = [];
    for (const t of new Set(types)) {
      switch (t) {
        case "string":
        case "boolean":
        case "null":
          out.push({ text: t, prec: 2 });
          break;
        // union() keeps one "number" for both.
        case "number":
        case "integer":
          out.push({ text: "number", prec: 2 });
          break;
        case "array":
          out.push(this.#array(schema, indent, chain));
          break;
        case "object":
          out.push(this.#object(schema, indent, chain));
          break;
        default:
          return UNKNOWN;
      }
    }
    return union(out);
  }

  #array(
    schema: Record<string, unknown>,
    indent: string,
    chain: readonly unknown[],
  ): Rendered {
    const tuple = Array.isArray(schema.prefixItems)
      ? schema.prefixItems
      : Array.isArray(schema.items)
      ? schema.items
      : null;
    if (tuple !== null) {
      const rest = Array.isArray(schema.items)
        ? schema.additionalItems
        : schema.items;
      const items = tuple.slice(0, this.#bounds.maxProperties).map((s) =>
        this.type(s, indent, chain, true).text
      );
      if (rest !== false || tuple.length > this.#bounds.maxProperties) {
        const more = rest === undefined || rest === true ||
            tuple.length > this.#bounds.maxProperties
          ? UNKNOWN
          : this.type(rest, indent, chain, true);
        items.push(`...${arrayOf(more)}`);
      }
      return { text: `[${items.join(", ")}]`, prec: 2 };
    }
    if (!("items" in schema)) return { text: "unknown[]", prec: 2 };
    return {
      text: arrayOf(this.type(schema.items, indent, chain, true)),
      prec: 2,
    };
  }

  #object(
    schema: Record<string, unknown>,
    indent: string,
    chain: readonly unknown[],
  ): Rendered {
    const props = isPlainObject(schema.properties)
      ? Object.entries(schema.properties)
      : [];
    const required = new Set(
      Array.isArray(schema.required)
        ? schema.required.filter((r) => typeof r === "string")
        : [],
    );
    const extra = schema.additionalProperties;
    const typedExtra = isPlainObject(extra) && Object.keys(extra).length > 0;
    // A typed index signature beside properties of other types would make
    // TypeScript refuse the properties: beside properties it is `unknown`.
    const open = extra === true || isPlainObject(extra) ||
      isPlainObject(schema.patternProperties);
    if (props.length === 0) {
      if (typedExtra) {
        const value = this.type(extra, indent + "  ", chain, true);
        return { text: `Record<string, ${value.text}>`, prec: 2 };
      }
      const value = extra === false ? "never" : "unknown";
      return { text: `Record<string, ${value}>`, prec: 2 };
    }
    const inner = indent + "  ";
    const lines: string[] = [];
    const shown = props.slice(0, this.#bounds.maxProperties);
    for (const [name, sub] of shown) {
      const doc = this.#spend(
        docComment(propertyDoc(sub), inner, PROPERTY_DOC),
      );
      const value = this.type(sub, inner, chain, true);
      const mark = required.has(name) ? "" : "?";
      lines.push(
        `${doc}${inner}${this.#spend(key(name))}${mark}: ${value.text};`,
      );
    }
    const left = props.length - shown.length;
    if (left > 0) {
      lines.push(
        `${inner}/* cut: ${left} more properties */ [key: string]: unknown;`,
      );
    } else if (open) lines.push(`${inner}[key: string]: unknown;`);
    return { text: `{\n${lines.join("\n")}\n${indent}}`, prec: 2 };
  }

  #ref(
    node: Record<string, unknown>,
    indent: string,
    chain: readonly unknown[],
    guarded: boolean,
  ): Rendered {
    const target = (this.#targetOf ??= refTargets(this.#root))(node);
    if (target === undefined) return UNKNOWN;
    if (guarded) {
      return { text: this.#alias(String(node.$ref), target), prec: 2 };
    }
    if (chain.includes(target)) return cut("refers to itself");
    return this.type(target, indent, [...chain, target], guarded);
  }

  // The alias of a `$ref` target, declared (once) the first time; named
  // after the reference's last segment (`Root` for a whole document).
  #alias(ref: string, target: unknown): string {
    const known = this.#aliasOf.get(target);
    if (known !== undefined) return known;
    const last = pointerSegment(ref.split(/[#/]/).pop()!) || "Root";
    const base = `${ident(this.#owner)}_${ident(last)}`;
    let name = base;
    for (let i = 2; this.#taken.has(name); i++) name = `${base}_${i}`;
    this.#taken.add(name);
    this.names.push(name);
    this.#aliasOf.set(target, name);
    // The body refers back to its own alias only under a property or an
    // array, which TypeScript allows.
    const body = this.type(target, "", [target]);
    const doc = docComment(propertyDoc(target), "", FUNCTION_DOC);
    this.aliases.push(`${doc}type ${name} = ${body.text};`);
    return name;
  }
}

function union(members: Rendered[]): Rendered {
  const texts = [...new Set(members.map((m) => m.text))];
  if (texts.includes("unknown")) return UNKNOWN;
  if (texts.length === 1) return members.find((m) => m.text === texts[0])!;
  return { text: texts.join(" | "), prec: 0 };
}

function arrayOf(item: Rendered): string {
  return item.prec === 2 && !item.text.includes("/*")
    ? `${item.text}[]`
    : `(${item.text})[]`;
}

// A JSON literal is its TypeScript literal type; NaN and the infinities
// have none.
function literal(value: unknown): Rendered {
  if (
    typeof value === "string" || typeof value === "boolean" ||
    value === null || (typeof value === "number" && Number.isFinite(value))
  ) return { text: JSON.stringify(value), prec: 2 };
  if (Array.isArray(value)) return { text: "unknown[]", prec: 2 };
  return isPlainObject(value)
    ? { text: "Record<string, unknown>", prec: 2 }
    : UNKNOWN;
}

// Whether `args` may be left out: the validator that checks every call
// takes `{}` (no `required` list may still refuse it: `minProperties`, an
// `anyOf` of `required`s).
function acceptsNoArgs(schema: unknown): boolean {
  if (!isPlainObject(schema)) return true;
  try {
    return validateValue(schema, {}).valid;
  } catch {
    return false; // a schema it cannot compile refuses every call
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
// Names an object type may hold but that read as something else to a
// reader (or an old engine): always quoted.
const QUOTED = new Set(["__proto__", "constructor", "prototype"]);

function key(name: string): string {
  return IDENTIFIER.test(name) && !QUOTED.has(name)
    ? name
    : JSON.stringify(name);
}

function ident(text: string): string {
  const out = text.replace(/[^A-Za-z0-9_$]/g, "_").slice(0, 60);
  return /^[0-9]/.test(out) || out === "" ? `_${out}` : out;
}

// A property's doc: its description (or title), default and deprecation.
function propertyDoc(schema: unknown): string {
  if (!isPlainObject(schema)) return "";
  const lines: string[] = [];
  const text = typeof schema.description === "string"
    ? schema.description
    : typeof schema.title === "string"
    ? schema.title
    : "";
  if (text.trim() !== "") lines.push(text.trim());
  if ("default" in schema) {
    const json = JSON.stringify(schema.default) ?? "undefined";
    lines.push(
      `@default ${json.length > 200 ? json.slice(0, 200) + "…" : json}`,
    );
  }
  if (schema.deprecated === true) lines.push("@deprecated");
  return lines.join("\n");
}

// Untrusted text as the lines of a block comment: `*/` cannot close it,
// and every line break (CR, LS, PS too) starts a line of its own.
function commentLines(text: string): string[] {
  return text.replace(/\r\n?/g, "\n").replace(/\*\//g, "*\\/")
    .split(/\n|\u2028|\u2029/);
}

function comment(open: "/*" | "/**", lines: string[], indent: string): string {
  const body = lines.map((l) => `${indent} *${l === "" ? "" : " " + l}`);
  return `${indent}${open}\n${body.join("\n")}\n${indent} */`;
}

// The doc comment of a declaration at `indent`, ending in a line break
// (the declaration follows it); "" when there is nothing to say.
function docComment(text: string, indent: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed === "") return "";
  const lines = commentLines(
    trimmed.length > max ? trimmed.slice(0, max) + "…" : trimmed,
  );
  return (lines.length === 1
    ? `${indent}/** ${lines[0]} */`
    : comment("/**", lines, indent)) + "\n";
}

function blockComment(lines: readonly string[]): string {
  return comment("/*", lines.flatMap(commentLines), "");
}

// The subschema each `$ref` of `root` names, as the validator resolves it.
// `schemaRefs` resolves a copy; the renderer walks `root` itself (its
// budget counts what it reads there), so each copied node is paired with
// the node it copies, by walking both at once.
function refTargets(
  root: unknown,
): (node: Record<string, unknown>) => unknown {
  const refs = isPlainObject(root) ? schemaRefs(root) : null;
  if (refs === null) return () => undefined;
  const copyOf = new Map<object, Record<string, unknown>>();
  const originalOf = new Map<unknown, object>();
  const pair = (original: unknown, copy: unknown) => {
    if (typeof original !== "object" || original === null) return;
    if (copyOf.has(original)) return;
    if (isPlainObject(copy)) copyOf.set(original, copy);
    originalOf.set(copy, original);
    for (const [key, value] of Object.entries(original)) {
      pair(value, (copy as Record<string, unknown>)[key]);
    }
  };
  pair(root, refs.root);
  return (node) => {
    const copy = copyOf.get(node);
    return copy && originalOf.get(refs.refsOf(copy)[0]);
  };
}
