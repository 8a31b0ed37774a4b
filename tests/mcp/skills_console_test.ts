/**
 * The console says why a skill is left out of MCP's `skills/list`: an
 * operator's folder whose name breaks the Agent Skills rules is listed in
 * `/api/catalog` (a tool and an A2E skill still) with that warning.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fixtureHost, getJson } from "../support/console_host.ts";

Deno.test("/api/catalog carries a misnamed skill's warning that MCP skills/list leaves it out", async () => {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_console_" });
  await Deno.mkdir(join(dir, "skills", "My_Notes"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "skills", "My_Notes", "SKILL.md"),
    "---\nname: My_Notes\ndescription: Takes notes\n---\nBe brief.\n",
  );
  await using t = await fixtureHost({ dir });
  const catalog = await getJson(t.host, "/api/catalog");
  const skills = catalog.skills as {
    name: string;
    status: string;
    warnings?: string[];
  }[];
  const notes = skills.find((s) => s.name === "My_Notes");
  assert.equal(notes?.status, "Published");
  assert.ok(
    notes?.warnings?.some((w) =>
      /breaks the Agent Skills rule.*left out of MCP skills\/list/.test(w)
    ),
    JSON.stringify(notes),
  );
  const steps = skills.find((s) => s.name === "steps");
  assert.deepEqual(steps?.warnings, []);
});
