/**
 * The bare host's child with one hop less (`bare_host.ts --direct`): its
 * worker reads the pipe and writes each answer itself, so no line passes
 * through the main thread. Measures what skipping the main thread's relay
 * would gain; skillbox cannot take that shortcut, because a sandbox
 * process's main thread is what keeps each session's worker to its own
 * operations (`docs/benchmarks.md#the-floor-bench`). No skillbox code.
 *
 * @module
 */

const WORKER = `
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const buffer = new Uint8Array(64 * 1024);
let pending = "";
while (true) {
  const n = await Deno.stdin.read(buffer);
  if (n === null) break;
  pending += decoder.decode(buffer.subarray(0, n), { stream: true });
  let newline;
  while ((newline = pending.indexOf("\\n")) >= 0) {
    const bytes = encoder.encode(pending.slice(0, newline + 1));
    pending = pending.slice(newline + 1);
    let at = 0;
    while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at));
  }
}
self.close();
`;

new Worker(
  URL.createObjectURL(new Blob([WORKER], { type: "text/javascript" })),
  { type: "module" },
);
