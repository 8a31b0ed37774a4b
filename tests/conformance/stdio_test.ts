import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { assertPong, coreConformance, type Msg, RAW } from "../support/wire.ts";

const HOST = fileURLToPath(new URL("../../host.ts", import.meta.url));

/** Spawns `host.ts --stdio` exactly as the Python SDK's SubprocessTransport would. */
function spawnStdio() {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--allow-all", HOST, "--stdio"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const stdoutLines: string[] = [];
  return {
    child,
    stdoutLines,
    async send(raw: string) {
      await writer.write(new TextEncoder().encode(raw + "\n"));
    },
    // A bound on a wait, not a timing assertion: generous, since the host's
    // cold start on a loaded 2-core machine has taken over 10 s.
    async next(timeoutMs = 60_000): Promise<Msg> {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        lines.cancel();
      }, timeoutMs);
      try {
        while (!buffer.includes("\n")) {
          const { done, value } = await lines.read();
          if (done) {
            throw new Error(
              late
                ? `No line on stdout within ${timeoutMs} ms`
                : "stdout ended",
            );
          }
          buffer += value;
        }
      } finally {
        clearTimeout(timer);
      }
      const at = buffer.indexOf("\n");
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      stdoutLines.push(line);
      return JSON.parse(line);
    },
    async end() {
      await writer.close();
      const rest = await lines.read();
      const status = await child.status;
      const stderr = await new Response(child.stderr).text();
      return { status, rest, stderr };
    },
  };
}

Deno.test("stdio: core exchanges are complete, one message per stdout line", async () => {
  const proc = spawnStdio();
  // The real CLI serves the standard capabilities, skills included.
  await coreConformance(proc.send, () => proc.next(), { servesSkills: true });
  const { status, rest, stderr } = await proc.end();
  assert.equal(status.code, 0, "exits cleanly when stdin closes");
  assert.ok(rest.done, "nothing but messages on stdout");
  assert.match(stderr, /stdio/, "the banner goes to stderr");
  for (const line of proc.stdoutLines) {
    assert.doesNotThrow(() => JSON.parse(line));
  }
});

Deno.test("stdio: shutdown ends the session and the process", async () => {
  const proc = spawnStdio();
  await proc.send(RAW.ping("p"));
  assertPong(await proc.next(), "p");
  await proc.send('{"type":"shutdown","id":"s","timeout":1}');
  const status = await proc.child.status;
  assert.equal(status.code, 0);
  await proc.end().catch(() => {});
});
