/**
 * Hostile: an imported server that fails every start. Its retries wait on
 * the backoff's timers (driven here by the test, so no wall clock is
 * asserted): one timer at a time, each wait doubling up to the cap and
 * never past it, no attempt without a timer firing (the server's own start
 * counter says how many ran), one log line and one registry change for the
 * whole failing streak although every attempt's reason differs, a call in
 * between answered at once, and no timer left pending when the host closes
 * during a backoff (Deno's test sanitizers do not see timers: these are
 * the test's own).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createImportedServers,
  type RetryTimers,
} from "../../runtime/mcp/imported_servers.ts";

/** Timers the test fires by hand. */
class HandTimers implements RetryTimers {
  readonly pending = new Map<number, { fn: () => void; ms: number }>();
  #next = 0;
  #armed = Promise.withResolvers<void>();
  set(fn: () => void, ms: number): number {
    const handle = ++this.#next;
    this.pending.set(handle, { fn, ms });
    this.#armed.resolve();
    return handle;
  }
  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  /** Resolves once a timer is pending. */
  async armed(): Promise<void> {
    if (this.pending.size === 0) await this.#armed.promise;
    this.#armed = Promise.withResolvers<void>();
  }
  /** Fires the one pending timer; returns its wait. */
  fire(): number {
    assert.equal(this.pending.size, 1, "more or less than one retry pending");
    const [handle, timer] = [...this.pending][0]!;
    this.pending.delete(handle);
    timer.fn();
    return timer.ms;
  }
}

const OFF = () =>
  Promise.resolve({
    mode: "off" as const,
    active: false,
    reason: "off",
    layout: null,
  });

Deno.test("a server that fails forever retries only when its backoff timer fires, capped, logged once", async () => {
  const dir = await Deno.makeTempDir();
  const count = join(dir, "count");
  const timers = new HandTimers();
  const logs: string[] = [];
  let changes = 0;
  const servers = createImportedServers({
    servers: {
      // Each attempt's stderr differs (its pid): still one line.
      flap: {
        command: "sh",
        args: ["-c", `echo start >> '${count}'; echo "boom $$" >&2; exit 1`],
      },
    },
    confinement: OFF,
    timers,
    random: () => 0,
    backoff: { initialMs: 1_000, maxMs: 8_000 },
    log: (line) => logs.push(line),
    onChange: () => {
      changes++;
    },
  });
  try {
    await servers.start();
    const waits: number[] = [];
    for (let i = 0; i < 11; i++) {
      await timers.armed();
      const attempts = (await Deno.readTextFile(count)).split("\n").length - 1;
      assert.equal(attempts, i + 1, "an attempt ran without its timer");
      if (i === 3) {
        // A call while it backs off is answered at once, saying when.
        const answer = await servers.call("flap", "any", {}, {
          timeoutMs: 60_000,
          onEvent() {},
        });
        assert.equal(answer.ok, false);
        assert.match(
          answer.ok ? "" : answer.message,
          /"flap" is unavailable: .*boom.*; next attempt in \d+ s/,
        );
        assert.equal(timers.pending.size, 1);
      }
      waits.push(timers.fire());
    }
    // Each wait is the backoff's, less the moment between the failure and
    // the timer being set: doubling from 1 s, then capped at 8 s.
    const expected = [1, 2, 4, 8, 8, 8, 8, 8, 8, 8, 8].map((s) => s * 1000);
    for (const [i, wait] of waits.entries()) {
      assert.ok(
        wait <= expected[i]! && wait > expected[i]! / 2,
        `wait ${i}: ${waits.join(", ")}`,
      );
    }
    await timers.armed();
    assert.equal(
      logs.filter((l) => /"flap" failed/.test(l)).length,
      1,
      logs.join("\n"),
    );
    assert.equal(changes, 1, "the registry was told more than once");
  } finally {
    await servers.close();
    await Deno.remove(dir, { recursive: true });
  }
  assert.equal(timers.pending.size, 0, "a retry timer outlived close");
});
