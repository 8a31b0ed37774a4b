/**
 * A hostile module's words in the host's log. A file in a skills folder
 * that throws while it loads has its message logged, and that message is
 * the module's to choose: an escape sequence recolours or clears the
 * operator's terminal, and a newline starts a line that passes for one of
 * the host's own ("skillbox: ..."). Both used to reach stderr as written.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost } from "../../mod.ts";
import { readListening, spawnHostCli } from "../support/host_cli.ts";

// What the module's error says: colour, a forged line, a C1 escape start
// (U+009B), a right-to-left override.
const HOSTILE = "boom\u001b[31mRED\u001b[0m\nskillbox: FORGED admin login" +
  "\u009b2J\u202eevil";

// Every character a terminal acts on or a log reader splits at, but tab.
// deno-lint-ignore no-control-regex
const UNPRINTABLE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e]/;

async function hostileFolder(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox-log-" });
  const skills = join(dir, "skills");
  await Deno.mkdir(skills);
  await Deno.writeTextFile(
    join(skills, "evil.ts"),
    `throw new Error(${JSON.stringify(HOSTILE)});\n`,
  );
  return dir;
}

function assertPrintable(lines: string[]): void {
  const line = lines.find((l) => l.includes("boom"));
  assert.ok(line, `the module's error is logged:\n${lines.join("\n")}`);
  for (const l of lines) assert.doesNotMatch(l, UNPRINTABLE, l);
  assert.ok(!lines.some((l) => l.startsWith("skillbox: FORGED")));
  // The file is named once (the host used to add a second "Cannot load").
  assert.equal(line.match(/Cannot load "/g)?.length, 1, line);
  // What it said is all there, escaped, on the one line.
  assert.match(
    line,
    /boom\\u001b\[31mRED\\u001b\[0m\\u000askillbox: FORGED admin login\\u009b2J\\u202eevil/,
  );
}

Deno.test("a module's error reaches the operator's terminal as one printable line", async () => {
  const dir = await hostileFolder();
  const { child, stderr: reader } = spawnHostCli(
    ["--skills", join(dir, "skills"), "--port", "0"],
    dir,
  );
  try {
    // The load's failures are logged before the banner.
    const { seen } = await readListening(reader);
    await reader.cancel();
    assertPrintable(seen.split("\n").filter((l) => l !== ""));
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an embedder's log gets the same printable lines", async () => {
  const dir = await hostileFolder();
  const lines: string[] = [];
  const host = createHost({
    config: {
      builtinSkills: false,
      skills: [join(dir, "skills")],
      store: null,
    },
    log: (line) => lines.push(line),
  });
  try {
    const report = await host.ready;
    assert.equal(report.errors.length, 1);
    assertPrintable(lines);
  } finally {
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(dir, { recursive: true });
  }
});
