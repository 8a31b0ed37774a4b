/**
 * The bare host: the floor bench's two floors composed in series, with no
 * skillbox code. Each `tool/call/req` that arrives on a WebSocket served by
 * a bare `Deno.serve` goes as one line over a pipe to a child Deno process,
 * through a `postMessage` round trip to a worker there (`_floor_child.ts`,
 * the floor bench's child), and back as a `tool/call/resp`.
 *
 * It answers one question about issue 23's yardstick (`floor_bench.ts`,
 * kept with the owners' design notes, not in this repository; ratio =
 * call / (echo + floor), goal ≤ 1.5): what ratio does a host that does
 * nothing but cross the same boundaries score? Run the owners' floor bench
 * against it:
 *
 * ```sh
 * deno run -A bench/bare_host.ts <path to their floor_bench.ts> 3
 * ```
 *
 * That starts this server, runs `deno run -A <floor_bench.ts> ws://…/a2e`
 * the given number of times (each prints its JSON line) and stops. With
 * `--direct` first, the child's worker reads the pipe and answers on it
 * itself (`_floor_child_direct.ts`): one thread hop less than the floor.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("./_floor_child.ts", import.meta.url));
const DIRECT_CHILD = fileURLToPath(
  new URL("./_floor_child_direct.ts", import.meta.url),
);

/** A running bare host. */
export interface BareHost {
  /** `ws://127.0.0.1:<port>/a2e` */
  url: string;
  /** Stops the server and its child. */
  close(): Promise<void>;
}

/**
 * Starts a bare host on a free loopback port.
 *
 * @param options `direct`: the worker reads and answers the pipe itself,
 * with no relay through the child's main thread @default false
 *
 * @example Start one and stop it
 * ```ts ignore
 * import { startBareHost } from "./bare_host.ts";
 * const host = startBareHost();
 * console.log(host.url);
 * await host.close();
 * ```
 *
 * @returns the running host
 */
export function startBareHost(options: { direct?: boolean } = {}): BareHost {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      options.direct ? DIRECT_CHILD : CHILD,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  // Calls are answered in the order they were sent: the child is a FIFO.
  const waiting: WebSocket[] = [];
  const reading = (async () => {
    let pending = "";
    for await (const chunk of child.stdout) {
      pending += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        const { id } = JSON.parse(line) as { id: string };
        waiting.shift()?.send(JSON.stringify({
          type: "tool/call/resp",
          req_id: id,
          result: { ok: true },
        }));
      }
    }
  })();
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    (request) => {
      const { socket, response } = Deno.upgradeWebSocket(request);
      socket.onmessage = (event) => {
        const message = JSON.parse(String(event.data)) as {
          type: string;
          id: string;
        };
        if (message.type !== "tool/call/req") {
          socket.send(JSON.stringify({ type: "ok", req_id: message.id }));
          return;
        }
        waiting.push(socket);
        writer.write(
          encoder.encode(JSON.stringify({ t: "op", id: message.id }) + "\n"),
        );
      };
      return response;
    },
  );
  return {
    url: `ws://127.0.0.1:${server.addr.port}/a2e`,
    async close() {
      await server.shutdown();
      await writer.close().catch(() => {});
      await reading.catch(() => {});
      await child.status;
    },
  };
}

if (import.meta.main) {
  const direct = Deno.args[0] === "--direct";
  const [floorBench, runs = "3"] = Deno.args.slice(direct ? 1 : 0);
  if (floorBench === undefined) {
    // deno-lint-ignore no-console
    console.error(
      "Usage: deno run -A bench/bare_host.ts [--direct] <path to floor_bench.ts> [runs]",
    );
    Deno.exit(2);
  }
  const host = startBareHost({ direct });
  try {
    for (let run = 0; run < Number(runs); run++) {
      const { success } = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", floorBench, host.url],
        stdout: "inherit",
        stderr: "inherit",
      }).output();
      if (!success) throw new Error(`Cannot run "${floorBench}"`);
    }
  } finally {
    await host.close();
  }
}
