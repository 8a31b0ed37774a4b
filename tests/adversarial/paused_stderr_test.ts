/**
 * A host whose standard error is still open but no longer read: a paused
 * pager, a log driver that blocks while its buffer is full (Docker's
 * default). Once the pipe's buffer (64 KiB on Linux) is full, a synchronous
 * write waits for the reader, and the host used to stop serving everyone at
 * its next log line. Here a reload of the skills folder logs one refusal per
 * file, about 300 KiB in all.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { answerTo, type Msg, wsWire } from "../support/fuzz_drive.ts";
import { readListening, spawnHostCli } from "../support/host_cli.ts";

const REFUSED = 1500;

Deno.test("a host whose stderr is not read serves on and loses no log line", async () => {
  const work = await Deno.makeTempDir({ prefix: "skillbox-paused-stderr-" });
  const skills = join(work, "skills");
  await Deno.mkdir(skills);
  await Deno.writeTextFile(join(skills, "holder.ts"), tool("dup", "held"));
  await Deno.writeTextFile(
    join(work, "skillbox.jsonc"),
    JSON.stringify({
      builtin_skills: false,
      skills: [skills],
      store: null,
      sandbox: { cache_dir: join(work, "cache") },
    }),
  );
  const { child, stderr: reader } = spawnHostCli(["--port", "0"], work);
  let seen = "";
  try {
    const listening = await readListening(reader);
    seen = listening.seen;
    // A session, open before the reloads, is told of each one.
    const wire = await wsWire(`ws://127.0.0.1:${listening.port}/a2e`);
    try {
      await wire.send(JSON.stringify({ type: "ping", id: "hello" }));
      await answerTo(wire, "hello");
      // From here on nobody reads the host's stderr, and nobody closes it.
      // Each new file claims the name "holder.ts" holds, so the reload
      // refuses it and logs why; "marker" is the one it accepts.
      for (let i = 0; i < REFUSED; i++) {
        await Deno.writeTextFile(
          join(skills, `dup_${i}.ts`),
          tool("dup", "no"),
        );
      }
      await Deno.writeTextFile(
        join(skills, "marker.ts"),
        tool("marker", "here"),
      );

      // The reload that adds "marker" comes last, after those that logged
      // the refusals. A host stuck writing a log line says nothing more.
      while (!wire.received.some(addsMarker)) {
        const before = wire.received.length;
        await wire.arrival(20_000);
        assert.ok(wire.received.length > before, "The host stopped talking");
      }
      await wire.send(JSON.stringify({
        type: "tool/call/req",
        id: "call",
        tool_name: "marker",
        arguments: {},
      }));
      const answer = await answerTo(wire, "call", 20_000);
      assert.equal((answer.data as Msg).data, "here", JSON.stringify(answer));
    } catch (error) {
      child.kill("SIGKILL"); // A stuck host would never close the session.
      throw error;
    } finally {
      await wire.close();
    }
    const health = await fetch(`http://127.0.0.1:${listening.port}/health`, {
      signal: AbortSignal.timeout(20_000),
    });
    assert.equal(health.status, 200);
    await health.body?.cancel();

    // Read again: every refusal was kept, none dropped.
    child.kill("SIGTERM");
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    const refused = [...seen.matchAll(/dup_(\d+)\.ts" is refused/g)].map((
      m,
    ) => Number(m[1]));
    assert.equal(new Set(refused).size, REFUSED, seen.slice(-2000));
    assert.doesNotMatch(seen, /dropped/);
    assert.equal((await child.status).code, 0);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Ended already.
    }
    await reader.cancel().catch(() => {});
    await child.status;
    await Deno.remove(work, { recursive: true });
  }
});

// A drop-in tool that answers `answer`.
function tool(name: string, answer: string): string {
  return `export default { kind: "tool", name: "${name}", description: "A tool", input: { type: "object" }, run() { return "${answer}"; } };\n`;
}

// The host's push telling its sessions that "marker" joined.
function addsMarker(message: Msg): boolean {
  return message.type === "invoke/event" && message.kind === "tools.changed" &&
    ((message.data as Msg).added as string[]).includes("marker");
}
