/**
 * Tool names as other runtimes write them in a skill's `tools` or
 * `allowed-tools` (`Read`, `Bash(git:*)`, ...), mapped to skillbox's own
 * tools, and the `Bash(...)` patterns that narrow what `run_command` may
 * run.
 *
 * | written | skillbox tool(s) |
 * |---|---|
 * | `Read` | `read_file` |
 * | `Glob` | `find_files` |
 * | `Grep` | `grep` |
 * | `LS` | `list_dir` |
 * | `Bash` | `run_command` |
 * | `Write` | `write_file` |
 * | `Edit`, `MultiEdit` | `read_file` and `write_file`: skillbox has no in-place edit tool, so an edit is a read followed by a whole-file write |
 * | `WebFetch` | `http_request` |
 *
 * A lower-case name (`read_file`, `my_tool`) is taken as a skillbox tool
 * name as written. Anything else (`WebSearch`, `Task`, `mcp__x__y`, a
 * pattern on a tool other than `Bash`) is unknown: it grants nothing and is
 * reported, never widened into something broader.
 *
 * @module
 */

/** Other runtimes' tool names and the skillbox tools they stand for. */
export const TOOL_NAME_MAP: ReadonlyMap<string, readonly string[]> = new Map([
  ["Read", ["read_file"]],
  ["Glob", ["find_files"]],
  ["Grep", ["grep"]],
  ["LS", ["list_dir"]],
  ["Bash", ["run_command"]],
  ["Write", ["write_file"]],
  ["Edit", ["read_file", "write_file"]],
  ["MultiEdit", ["read_file", "write_file"]],
  ["WebFetch", ["http_request"]],
]);

/** The skillbox tool that `Bash` and its patterns map to. */
export const COMMAND_TOOL = "run_command";

/**
 * One command `run_command` may run: its leading words (`["git"]`), and
 * whether more arguments may follow (`Bash(git:*)`) or the command must be
 * exactly these words (`Bash(npm run test)`).
 */
export interface CommandRule {
  words: string[];
  prefix: boolean;
}

/** What {@link mapToolNames} made of a list of tool names. */
export interface ToolNameMapping {
  /** skillbox tool names, unique, in order of first appearance. */
  tools: string[];
  /** Each name that was translated, and what it became. */
  mapped: Record<string, string[]>;
  /** Names that grant nothing, as written. */
  unknown: string[];
  /**
   * What `run_command` may run: null when it was granted without a pattern,
   * or not at all (patterns skillbox cannot enforce grant nothing).
   */
  commandRules: CommandRule[] | null;
}

/**
 * Splits an `allowed-tools` string into names: white space and commas
 * separate names, except inside parentheses (`Bash(git diff:*)` is one
 * name).
 *
 * @param text the field as written
 * @returns the names
 * @example
 * ```ts
 * import { splitToolList } from "./tool_names.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(splitToolList("Read, Bash(git diff:*) Grep"), ["Read", "Bash(git diff:*)", "Grep"]);
 * ```
 */
export function splitToolList(text: string): string[] {
  const names: string[] = [];
  let current = "";
  let depth = 0;
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && /[\s,]/.test(ch)) {
      if (current !== "") names.push(current);
      current = "";
    } else current += ch;
  }
  if (current !== "") names.push(current);
  return names;
}

/**
 * Maps tool names written for any runtime to skillbox's tools.
 *
 * @param names the names, from `tools` and `allowed-tools`
 * @returns the skillbox tools, what was mapped, what is unknown, and the
 *   `run_command` rules
 * @example Claude-style names with a git-only Bash
 * ```ts
 * import { mapToolNames } from "./tool_names.ts";
 * import assert from "node:assert/strict";
 * const m = mapToolNames(["Read", "Bash(git:*)", "grep", "WebSearch"]);
 * assert.deepEqual(m.tools, ["read_file", "run_command", "grep"]);
 * assert.deepEqual(m.mapped, { Read: ["read_file"], "Bash(git:*)": ["run_command"] });
 * assert.deepEqual(m.unknown, ["WebSearch"]);
 * assert.deepEqual(m.commandRules, [{ words: ["git"], prefix: true }]);
 * ```
 */
export function mapToolNames(names: readonly string[]): ToolNameMapping {
  // Sets: a name written twice is listed once, where first written.
  const tools = new Set<string>();
  const mapped: Record<string, string[]> = {};
  const unknown = new Set<string>();
  const rules: CommandRule[] = [];
  let unrestricted = false;
  for (const name of names) {
    const pattern = /^([A-Za-z][\w-]*)\((.*)\)$/s.exec(name);
    if (pattern) {
      const [, base, inner] = pattern;
      const rule = base === "Bash" ? parseCommandPattern(inner!) : undefined;
      if (rule === undefined) {
        unknown.add(name);
        continue;
      }
      mapped[name] = [COMMAND_TOOL];
      tools.add(COMMAND_TOOL);
      if (rule === null) unrestricted = true;
      else rules.push(rule);
      continue;
    }
    const target = TOOL_NAME_MAP.get(name);
    if (target) {
      mapped[name] = [...target];
      target.forEach((tool) => tools.add(tool));
      if (target.includes(COMMAND_TOOL)) unrestricted = true;
    } else if (/^[a-z][a-z0-9_.-]*$/.test(name) && !name.startsWith("mcp__")) {
      tools.add(name);
      if (name === COMMAND_TOOL) unrestricted = true;
    } else {
      unknown.add(name);
    }
  }
  return {
    tools: [...tools],
    mapped,
    unknown: [...unknown],
    commandRules: rules.length > 0 && !unrestricted ? rules : null,
  };
}

/**
 * Reads the inside of a `Bash(...)` pattern.
 *
 * @param pattern e.g. `git:*`, `git diff *`, `npm run test`, `*`
 * @returns a rule; null for `*` (anything); undefined when the pattern is
 *   not one skillbox can enforce (a `*` inside, shell syntax, quotes)
 * @example
 * ```ts
 * import { parseCommandPattern } from "./tool_names.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseCommandPattern("git diff:*"), { words: ["git", "diff"], prefix: true });
 * assert.deepEqual(parseCommandPattern("npm run test"), { words: ["npm", "run", "test"], prefix: false });
 * assert.equal(parseCommandPattern("*"), null);
 * assert.equal(parseCommandPattern("rm -rf /tmp/*"), undefined);
 * ```
 */
export function parseCommandPattern(
  pattern: string,
): CommandRule | null | undefined {
  let text = pattern.trim();
  if (text === "*" || text === "") return null;
  let prefix = false;
  if (text.endsWith(":*") || text.endsWith(" *")) {
    prefix = true;
    text = text.slice(0, -2).trim();
  }
  if (text === "" || /[*?[\]{}|&;<>$`'"\\()]/.test(text)) return undefined;
  return { words: text.split(/\s+/), prefix };
}

/**
 * Says why `run_command` arguments are refused under the rules, or nothing:
 * the program and its arguments must start with (or, for an exact rule,
 * equal) a rule's words. The program is compared as written, so
 * `/usr/bin/git` does not match `git`.
 *
 * @param rules the skill's rules
 * @param args the `run_command` arguments
 * @returns null when allowed, else a reason that starts with "cannot run"
 * @example
 * ```ts
 * import { commandRefusal } from "./tool_names.ts";
 * import assert from "node:assert/strict";
 * const rules = [{ words: ["git"], prefix: true }];
 * assert.equal(commandRefusal(rules, { command: "git", args: ["status"] }), null);
 * assert.equal(
 *   commandRefusal(rules, { command: "rm", args: ["-rf", "x"] }),
 *   'cannot run "rm -rf x": its allowed-tools let run_command run only "git *"',
 * );
 * ```
 */
export function commandRefusal(
  rules: readonly CommandRule[],
  args: Readonly<Record<string, unknown>>,
): string | null {
  const rest = Array.isArray(args.args) ? args.args : [];
  const argv: unknown[] = [args.command, ...rest];
  const allowed = rules.some((rule) =>
    (rule.prefix
      ? argv.length >= rule.words.length
      : argv.length === rule.words.length) &&
    rule.words.every((word, i) => argv[i] === word)
  );
  if (allowed) return null;
  const line = argv.map(String).join(" ");
  const only = rules.map((r) => `"${describeCommandRule(r)}"`).join(", ");
  return `cannot run ${JSON.stringify(line.slice(0, 200))}: ${
    only === ""
      ? "none of its allowed-tools patterns could be enforced"
      : `its allowed-tools let run_command run only ${only}`
  }`;
}

/**
 * Writes a rule the way the skill's author would read it.
 *
 * @param rule the rule
 * @returns e.g. `git *` or `npm run test`
 * @example
 * ```ts
 * import { describeCommandRule } from "./tool_names.ts";
 * import assert from "node:assert/strict";
 * assert.equal(describeCommandRule({ words: ["git"], prefix: true }), "git *");
 * ```
 */
export function describeCommandRule(rule: CommandRule): string {
  return rule.words.join(" ") + (rule.prefix ? " *" : "");
}
