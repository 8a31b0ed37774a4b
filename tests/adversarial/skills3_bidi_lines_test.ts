/**
 * A skill folder's name is chosen by whoever wrote the folder, and it is
 * quoted in what the host says about the skill: the load report's warning
 * lines (`host.ready`, the startup banner) and, for a folder that cannot be
 * loaded, the description and blocked reason every client reads. A
 * bidirectional override or a control character there can make the text
 * read as something else, so each is escaped as the log lines escape it.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  failedSkillRecord,
  registryCatalog,
  resolveSkillStatus,
  skillLoadWarnings,
} from "../../runtime/skills/catalog.ts";
import { printableLine } from "../../protocol/lines.ts";
import { buildSnapshot } from "../../runtime/registry/snapshot.ts";

// Printable: what the log lines would write unchanged.
const printable = (text: string) => assert.equal(printableLine(text), text);

Deno.test("skill warnings and load failures escape a folder name's bidi override and newline", async () => {
  const root = await Deno.makeTempDir();
  try {
    const broken = `${root}/broken\u202eevil\nskillbox: forged`;
    await Deno.mkdir(broken);
    await Deno.writeTextFile(`${broken}/SKILL.md`, "no frontmatter");
    const odd = `${root}/odd\u2066one`;
    await Deno.mkdir(odd);
    await Deno.writeTextFile(
      `${odd}/SKILL.md`,
      "---\nname: notes\ndescription: Notes\n---\nBe brief.",
    );
    const snapshot = buildSnapshot([], { agentSkills: [broken, odd] });
    const catalog = registryCatalog({ registry: { snapshot }, home: null });
    const records = await catalog.skills();
    const lines = skillLoadWarnings(records);
    assert.equal(lines.length, 2, lines.join("\n"));
    lines.forEach(printable);
    assert.ok(lines.some((l) => l.includes("broken\\u202eevil\\u000a")));
    const failed = records.find((r) => r.run === null)!;
    const status = resolveSkillStatus(failed, {
      hasTool: () => true,
      hasToolkit: () => true,
    });
    assert.equal(status.status, "Blocked");
    printable(status.description);
    printable(String(status.metadata?.blocked_reason));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a load line cut at its bound keeps no half of a character", () => {
  // An emoji (two UTF-16 units) across the 300th unit of the message.
  const message = `${"x".repeat(299)}\u{1F600}${"y".repeat(50)}`;
  const record = failedSkillRecord("long", {
    path: "/s/long/SKILL.md",
    message,
    source: "project",
  });
  const [line] = skillLoadWarnings([record]);
  assert.ok(line!.isWellFormed(), "a lone surrogate is left at the cut");
  assert.ok(line!.endsWith(`${"x".repeat(299)}...`), line);
});
