/**
 * A host whose standard error has no reader any more: the supervisor that
 * read its log exited, or it was started as `deno run host 2>&1 | head`.
 * Writing a log line then fails (a broken pipe); the host used to die of
 * that at its next line, mid-call, and on SIGTERM before draining.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { answerTo, type Msg, wsWire } from "../support/fuzz_drive.ts";
import { readListening, spawnHostCli } from "../support/host_cli.ts";

const SKILLS = fileURLToPath(new URL("../fixtures/fuzz/", import.meta.url));

Deno.test("a host whose stderr reader is gone drains its calls on SIGTERM and exits 0", async () => {
  const work = await Deno.makeTempDir({ prefix: "skillbox-stderr-" });
  const config = join(work, "skillbox.jsonc");
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      builtin_skills: false,
      skills: [SKILLS],
      store: { path: join(work, "runs.db") },
      sandbox: { cache_dir: join(work, "cache") },
    }),
  );
  const { child, stderr: reader } = spawnHostCli(
    ["--config", config, "--port", "0"],
    work,
  );
  try {
    // Its banner names the port; then nobody reads its stderr again.
    const { port } = await readListening(reader);
    await reader.cancel();

    const wire = await wsWire(`ws://127.0.0.1:${port}/a2e`);
    try {
      wire.send(JSON.stringify({
        type: "tool/call/req",
        id: "inflight",
        tool_name: "wait",
        arguments: { ms: 1500 },
        streaming: true,
      }));
      // It runs (its first progress event came) when the host is told to
      // stop, and the host says so on its stderr.
      while (!wire.received.some((m) => m.req_id === "inflight")) {
        await wire.arrival(30_000);
      }
      child.kill("SIGTERM");
      const answer = await answerTo(wire, "inflight");
      assert.equal(answer.type, "tool/call/resp", JSON.stringify(answer));
      assert.equal((answer.data as Msg).success, true, JSON.stringify(answer));
    } finally {
      await wire.close();
    }
    const status = await child.status;
    assert.equal(status.code, 0);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Ended already.
    }
    await child.status;
    await Deno.remove(work, { recursive: true });
  }
});
