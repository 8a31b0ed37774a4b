import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { moduleGraph } from "../sandbox/module_graph.ts";
import { RELAY_FILES, RELAY_MAIN, relayDenoArgs } from "./relay_command.ts";

Deno.test("RELAY_FILES is the relay main's whole module graph", async () => {
  const graph = await moduleGraph(fileURLToPath(RELAY_MAIN));
  assert.deepEqual([...graph.files].sort(), [...RELAY_FILES].sort());
});

Deno.test("relayDenoArgs() lets the relay run only the command it wraps", () => {
  const args = relayDenoArgs({ token: "ab" }, ["/usr/bin/curl", "-s"]);
  assert.deepEqual(args.filter((a) => a.startsWith("--allow-run")), [
    "--allow-run=/usr/bin/curl",
  ]);
  assert.ok(!args.some((a) => a === "-A" || a === "--allow-all"));
  assert.throws(() => relayDenoArgs({ token: "ab" }, []), TypeError);
});
