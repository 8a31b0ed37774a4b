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
import { HOST_FLAGS, HOST_MAIN } from "../support/host_cli.ts";

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
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...HOST_FLAGS, HOST_MAIN, "--port", "0"],
    cwd: work,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream())
    .getReader();
  let seen = "";
  try {
    let port: string | undefined;
    while (port === undefined) {
      const { value, done } = await reader.read();
      assert.ok(!done, `The host ended before listening:\n${seen}`);
      seen += value;
      port = /skillbox listening: ws:\/\/127\.0\.0\.1:(\d+)\//.exec(seen)?.[1];
    }
    // From here on nobody reads the host's stderr, and nobody closes it.
    // Each new file claims the name "holder.ts" holds, so the reload refuses
    // it and logs why; "marker" is the one it accepts.
    for (let i = 0; i < REFUSED; i++) {
      await Deno.writeTextFile(join(skills, `dup_${i}.ts`), tool("dup", "no"));
    }
    await Deno.writeTextFile(join(skills, "marker.ts"), tool("marker", "here"));

    // The reload that logs the refusals also makes "marker" callable. A
    // host stuck writing a log line answers neither this call nor /health.
    const wire = await within(
      wsWire(`ws://127.0.0.1:${port}/a2e`),
      "The host stopped accepting sessions",
    );
    try {
      let answer: Msg | undefined;
      for (let attempt = 0; answer === undefined; attempt++) {
        assert.ok(attempt < 600, "The marker tool never came");
        const id = `call-${attempt}`;
        await wire.send(JSON.stringify({
          type: "tool/call/req",
          id,
          tool_name: "marker",
          arguments: {},
        }));
        const reply = await answerTo(wire, id, 20_000);
        if (reply.type === "tool/call/resp") answer = reply;
        else await wire.arrival(100); // Not loaded yet: ask again.
      }
      assert.equal((answer.data as Msg).data, "here", JSON.stringify(answer));
    } catch (error) {
      child.kill("SIGKILL"); // A stuck host would never close the session.
      throw error;
    } finally {
      await wire.close();
    }
    const health = await fetch(`http://127.0.0.1:${port}/health`, {
      signal: AbortSignal.timeout(20_000),
    });
    assert.equal(health.status, 200);
    await health.body?.cancel();

    // Read again: every refusal was kept, in order, none dropped.
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

// The promise's value, or a failure once a stuck host has had 20 s.
async function within<T>(promise: Promise<T>, stuck: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(stuck)), 20_000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
