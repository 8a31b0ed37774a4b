/**
 * The child of the bare-floor bench: echoes each stdin line through a
 * worker (`postMessage` there and back) to stdout. No skillbox code.
 *
 * @module
 */

const WORKER = `self.onmessage = (e) => self.postMessage(e.data);`;
const worker = new Worker(
  URL.createObjectURL(new Blob([WORKER], { type: "text/javascript" })),
  { type: "module" },
);
const encoder = new TextEncoder();
const decoder = new TextDecoder();
function onWorkerMessage(e: MessageEvent<string>): void {
  const bytes = encoder.encode(e.data + "\n");
  let at = 0;
  while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at));
}
worker.onmessage = onWorkerMessage;

let pending = "";
const buffer = new Uint8Array(64 * 1024);
while (true) {
  const n = await Deno.stdin.read(buffer);
  if (n === null) break;
  pending += decoder.decode(buffer.subarray(0, n), { stream: true });
  let newline: number;
  while ((newline = pending.indexOf("\n")) >= 0) {
    worker.postMessage(pending.slice(0, newline));
    pending = pending.slice(newline + 1);
  }
}
worker.terminate();
