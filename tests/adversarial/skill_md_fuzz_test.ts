// A seeded campaign of hostile SKILL.md texts against the parser: every
// text either parses or is refused with a SkillboxError (a reason an
// operator can read), never a TypeError, RangeError or a hang.

import assert from "node:assert/strict";
import { SkillboxError } from "../../protocol/errors.ts";
import { parseSkillMd } from "../../runtime/skills/skill_md.ts";
import { PROTO_KEYS, Rng } from "../support/fuzz.ts";

const FIELDS = [
  "name",
  "description",
  "version",
  "max_turns",
  "timeout_seconds",
  "llm",
  "input",
  "output",
  "inputSchema",
  "outputSchema",
  "env",
  "net",
  "allowed-tools",
  "metadata",
  "license",
  "compatibility",
];

const VALUES = [
  "42",
  "-1",
  "1e400",
  ".nan",
  "true",
  "null",
  "~",
  "[]",
  "{}",
  "[1, [2, [3]]]",
  "{a: {b: {c: 1}}}",
  '"\\u0000\\ud800"',
  "\u202e\u0301",
  "!!binary aGVsbG8=",
  "*nope",
  "&a [1]",
  "x".repeat(5000),
  "{__proto__: {polluted: 1}}",
  "{constructor: 1, toString: 2}",
  "[" + "[".repeat(200) + "]".repeat(200) + "]",
  "2024-01-01",
  "0x1F",
  "|\n  block\n  text",
];

function frontmatter(rng: Rng): string {
  const lines = ["name: good-one", "description: A skill"];
  const n = 1 + rng.int(5);
  for (let i = 0; i < n; i++) {
    const key = rng.chance(0.15) ? rng.pick(PROTO_KEYS) : rng.pick(FIELDS);
    lines.push(`${key}: ${rng.pick(VALUES)}`);
  }
  return lines.join("\n");
}

function hostile(rng: Rng): string {
  const body = "# Body\nSee [x](x.md).\n";
  switch (rng.int(10)) {
    case 0: // anchors and aliases bomb
      return "---\nname: bomb\ndescription: d\na: &a [x,x,x,x,x,x,x,x,x]\n" +
        "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\nmetadata: {e: [*d,*d,*d,*d,*d,*d,*d,*d,*d]}\n---\n" +
        body;
    case 1: // a list or a scalar as the frontmatter
      return `---\n${
        rng.pick(["- a\n- b", "42", "just text", "null", "~"])
      }\n---\n${body}`;
    case 2: // no closing fence
      return `---\n${frontmatter(rng)}\n${body}`;
    case 3: // BOM and CRLF
      return `\ufeff---\r\n${
        frontmatter(rng).replaceAll("\n", "\r\n")
      }\r\n---\r\n${body}`;
    case 4: // duplicate keys
      return `---\n${
        frontmatter(rng)
      }\nname: again\nname: thrice\n---\n${body}`;
    case 5: // deep nesting
      return `---\nname: deep\ndescription: d\nmetadata:\n${
        Array.from({ length: 300 }, (_, i) => " ".repeat(i + 1) + `k${i}:`)
          .join("\n")
      } 1\n---\n${body}`;
    case 6: { // binary bytes
      const bytes = Array.from(
        { length: 64 },
        () => String.fromCharCode(rng.int(256)),
      ).join("");
      return `---\n${frontmatter(rng)}\nx: "${
        bytes.replaceAll('"', "")
      }"\n---\n${bytes}`;
    }
    case 7: // huge string, over and under the cap
      return `---\nname: huge\ndescription: ${
        "d".repeat(rng.pick([2000, 300_000]))
      }\n---\n`;
    case 8: // a flow mapping as the whole frontmatter, wrong types inside
      return `---\n{name: ${rng.pick(VALUES)}, description: ${
        rng.pick(VALUES)
      }}\n---\n${body}`;
    default:
      return `---\n${frontmatter(rng)}\n---\n${body}`;
  }
}

Deno.test("hostile SKILL.md texts are parsed or refused with a reason", () => {
  const rng = new Rng(0x5eed);
  const unexpected: string[] = [];
  for (let i = 0; i < 600; i++) {
    const text = hostile(rng);
    try {
      const m = parseSkillMd(text, { folder: "good-one" });
      assert.equal(typeof m.name, "string");
      assert.equal(typeof m.description, "string");
      JSON.stringify(m);
    } catch (error) {
      if (!(error instanceof SkillboxError)) {
        unexpected.push(
          `#${i} ${String(error).slice(0, 200)}: ${
            JSON.stringify(text.slice(0, 160))
          }`,
        );
      }
    }
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.deepEqual(unexpected, []);
});
