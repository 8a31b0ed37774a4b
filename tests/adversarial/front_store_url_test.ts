/**
 * The banner's `history:` line shows the fleet's store URL without its
 * password, whatever characters the password holds.
 */

import assert from "node:assert/strict";
import { startHostProcess } from "./_host_process.ts";

Deno.test("the CLI's history line hides a store password that holds an @", async () => {
  // postgres.js takes the userinfo up to the last "@", as URL does: this
  // password is "pa@ss-word", and the host starts with the database down.
  await using host = await startHostProcess({
    store: { url: "postgres://skillbox:pa@ss-word@127.0.0.1:1/runs" },
  });
  const line = await host.waitForLine(/^history: /, 30_000);
  assert.equal(
    line,
    "history: PostgreSQL postgres://…@127.0.0.1:1/runs (store.url, shared with the fleet)",
  );
  assert.ok(!host.lines.some((l) => l.includes("ss-word")));
});
