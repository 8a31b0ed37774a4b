/**
 * Runs as the run store keeps them, for the store's and the console's
 * tests: one record, each test naming only the fields it is about.
 *
 * @module
 */

import type { RunRecord } from "../../runtime/store/store.ts";

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
