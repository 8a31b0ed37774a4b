/**
 * Runs as the run store keeps them, for the store's and the console's
 * tests: one record, or one run started on a recorder, each test naming
 * only the fields it is about.
 *
 * @module
 */

import type { RunObserver, RunStart } from "../../runtime/store/recorder.ts";
import type { RunRecord, RunStore } from "../../runtime/store/store.ts";
import { fakeSession } from "./skill_fakes.ts";

const session = fakeSession();

/**
 * The `i`th test run: `r<i>`, a tool named by its parity (`odd`, `even`),
 * every third one timed out, started and ended at `i`; `over` replaces any
 * field.
 *
 * @param i its number
 * @param over the fields that differ
 * @returns the run
 * @example An operator's run, and one token's
 * ```ts
 * import { testRun } from "./runs.ts";
 * import assert from "node:assert/strict";
 * assert.equal(testRun(3).outcome, "timeout");
 * assert.equal(testRun(1, { owner: "sha256:aaaaaaaa" }).name, "odd");
 * ```
 */
export function testRun(i: number, over: Partial<RunRecord> = {}): RunRecord {
  return {
    id: `r${i}`,
    parentId: null,
    kind: "tool",
    name: i % 2 ? "odd" : "even",
    toolkit: null,
    session: "s",
    transport: "websocket",
    tokenLabel: null,
    host: "h1",
    startedAt: i,
    endedAt: i,
    durationMs: i,
    outcome: i % 3 ? "ok" : "timeout",
    error: null,
    summary: null,
    args: "{}",
    result: null,
    eventCount: 1,
    llmTurns: 0,
    inputTokens: 0,
    outputTokens: 0,
    ...over,
  };
}

/**
 * A finished call of the `add` tool another host (`h2`) ran over SSE, as
 * the fleet's tests write it: `over` replaces any field.
 *
 * @param id its id
 * @param over the fields that differ
 * @returns the run
 * @example Still running
 * ```ts
 * import { addRun } from "./runs.ts";
 * import assert from "node:assert/strict";
 * assert.equal(addRun("a1", { outcome: "running" }).name, "add");
 * ```
 */
export function addRun(id: string, over: Partial<RunRecord> = {}): RunRecord {
  return testRun(0, {
    id,
    name: "add",
    transport: "sse",
    host: "h2",
    startedAt: 1,
    endedAt: 2,
    durationMs: 1,
    outcome: "ok",
    eventCount: 0,
    ...over,
  });
}

/**
 * Starts a run on a recorder: a call of the tool `add` with no arguments,
 * in one test session shared by every run; `over` replaces any field.
 *
 * @param recorder the recorder (or any observer)
 * @param over the fields that differ
 * @returns the run's id
 * @example Record a call that failed
 * ```ts
 * import { startRun } from "./runs.ts";
 * import { RunRecorder } from "../../runtime/store/recorder.ts";
 * import assert from "node:assert/strict";
 * const recorder = new RunRecorder({ store: null });
 * const id = startRun(recorder, { name: "nope" });
 * assert.equal(recorder.running[0]?.name, "nope");
 * recorder.finished(id, { outcome: "unknown_tool" });
 * await recorder.close();
 * ```
 */
export function startRun(
  recorder: RunObserver,
  over: Partial<RunStart> = {},
): string {
  return recorder.started({
    kind: "tool",
    name: "add",
    session,
    args: {},
    ...over,
  });
}

/**
 * A run store that keeps nothing, for tests of what uses one: writes are
 * dropped, every read answers empty; `over` replaces any method.
 *
 * @param over the methods that differ
 * @returns the store
 * @example A store whose writes fail
 * ```ts
 * import { emptyStore } from "./runs.ts";
 * import assert from "node:assert/strict";
 * const store = emptyStore({ write() { throw new Error("down"); } });
 * assert.throws(() => store.write([]), /down/);
 * assert.equal(store.count(), 0);
 * ```
 */
export function emptyStore(over: Partial<RunStore> = {}): RunStore {
  return {
    write() {},
    list: () => ({ runs: [], next: null }),
    get: () => null,
    file: () => null,
    children: () => ({ children: [], next: null }),
    timings: () => [],
    prune: () => 0,
    interrupt: () => 0,
    count: () => 0,
    close() {},
    ...over,
  };
}

/**
 * Wraps a run store so that the bytes of file content its methods hand
 * back (awaited or not) are counted: what a reader of the store was given.
 *
 * @param inner the store
 * @returns the wrapped store, and `read`: the bytes counted since it was
 *   last set to 0
 * @example Nothing read from a store that keeps no files
 * ```ts
 * import { countFileReads, emptyStore } from "./runs.ts";
 * import assert from "node:assert/strict";
 * const counted = countFileReads(emptyStore());
 * counted.store.file("r1", 0);
 * assert.equal(counted.read, 0);
 * ```
 */
export function countFileReads<S extends RunStore>(
  inner: S,
): { store: S; read: number } {
  const counted = { store: inner, read: 0 };
  const count = (value: unknown) => {
    const files = (value as { files?: unknown[] } | null)?.files ?? [];
    for (const f of [value, ...files]) {
      const data = (f as { data?: unknown } | null)?.data;
      if (data instanceof Uint8Array) counted.read += data.length;
    }
    return value;
  };
  counted.store = new Proxy(inner, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const out = value.apply(target, args);
        return out instanceof Promise ? out.then(count) : count(out);
      };
    },
  });
  return counted;
}
