/**
 * A module that fires a burst of `ctx.fetch` at once, through a real host:
 * each request holds up to `max_response_bytes` of answer in the host
 * while it runs (50 at once of 8 MiB each took the host from 52 MB to
 * 1.1 GB of memory), so one call's requests take turns, a few at a time,
 * while another call's requests still run at once.
 *
 * @module
 */

import assert from "node:assert/strict";
import { MAX_PARALLEL_FETCHES } from "../../runtime/egress/broker.ts";
import { startToolsHost } from "./_tools_host.ts";

const TOOLS: Record<string, string> = {
  // Fires every URL at once, in order, and reports each status.
  "burst.ts": `export default { kind: "tool", name: "burst",
  description: "Fetches every URL at once", input: { type: "object" },
  permissions: { net: ["localhost"] },
  async run(args, ctx) {
    const answers = await Promise.allSettled(args.urls.map((url) => ctx.fetch({ url })));
    return answers.map((a) => a.status === "fulfilled" ? a.value.status : String(a.reason));
  } };`,
};

interface Upstream {
  port: number;
  /** Paths in the order they arrived. */
  seen: string[];
  /** Resolves when `count` requests to /hold have arrived. */
  holding(count: number): Promise<void>;
  close(): Promise<void>;
}

// /hold answers only when the client goes; anything else at once.
function upstream(): Upstream {
  const seen: string[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const holds = () => seen.filter((p) => p === "/hold").length;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      seen.push(path);
      for (const w of waiters.filter((w) => holds() >= w.count)) w.resolve();
      if (path === "/hold") {
        await new Promise((resolve) =>
          req.signal.addEventListener("abort", resolve)
        );
      }
      return new Response("ok");
    },
  );
  return {
    port: server.addr.port,
    seen,
    holding: (count) =>
      holds() >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () => server.shutdown(),
  };
}

Deno.test("a module's burst of ctx.fetch runs a few at a time, without holding up other calls", async () => {
  const up = upstream();
  const served = await startToolsHost(TOOLS);
  const url = (path: string) => `http://localhost:${up.port}${path}`;
  const cancel = new AbortController();
  try {
    // Every turn taken by a request that never ends, then one more behind.
    const urls = [
      ...Array.from({ length: MAX_PARALLEL_FETCHES }, () => url("/hold")),
      url("/behind"),
    ];
    const burst = served.host.callTool("burst", { urls }, {
      signal: cancel.signal,
    }).catch((err: Error) => err);
    await up.holding(MAX_PARALLEL_FETCHES);
    // Another call is not held up by the first one's full turns; by the
    // time it is answered, the request fired with the holds has had every
    // chance to arrive.
    const other = await served.host.callTool("burst", { urls: [url("/ok")] });
    assert.equal(other.success, true, String(other.error));
    assert.deepEqual(other.data, [200]);
    assert.deepEqual(
      up.seen.filter((p) => p !== "/hold"),
      ["/ok"],
      "the request behind the holds waits its turn",
    );
    cancel.abort();
    await burst;
    // A burst of quick requests all get their answers, in turns.
    const quick = Array.from(
      { length: 4 * MAX_PARALLEL_FETCHES },
      () => url("/ok"),
    );
    const all = await served.host.callTool("burst", { urls: quick });
    assert.equal(all.success, true, String(all.error));
    assert.deepEqual(all.data, quick.map(() => 200));
  } finally {
    cancel.abort();
    await served.close();
    await up.close();
  }
});
