/**
 * Shared helpers for the adversarial tests: fixture paths, a call with
 * recorded events, and the "a normal call still works" check.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { SandboxPool } from "../../runtime/sandbox/sandbox.ts";
import type { Permissions } from "../../sandbox/sdk/types.ts";
import type { SandboxOutcome } from "../../runtime/sandbox/types.ts";

/** Folder holding the hostile and normal fixture modules. */
export const FIXTURES: string = fileURLToPath(
  new URL("../fixtures/sandbox/", import.meta.url),
);

/** Absolute path of a fixture module. */
export function fixture(name: string): string {
  return name.endsWith(".ts") ? FIXTURES + name : `${FIXTURES}${name}/mod.ts`;
}

/** An event as the host saw it. */
export interface SeenEvent {
  kind: string;
  data: Record<string, unknown>;
}

/** Options for {@link callFixture}. */
export interface CallOptions {
  args?: unknown;
  grant?: Permissions;
  timeoutMs?: number;
  session?: string;
  config?: Record<string, unknown>;
  isolation?: "warm" | "per-call";
  signal?: AbortSignal;
  exportName?: string;
}

/** Calls a fixture's definition and records its events. */
export async function callFixture(
  sandbox: SandboxPool,
  name: string,
  options: CallOptions = {},
): Promise<{ outcome: SandboxOutcome; events: SeenEvent[] }> {
  const events: SeenEvent[] = [];
  const outcome = await sandbox.call({
    path: fixture(name),
    export: options.exportName ?? "default",
    version: "v1",
    args: options.args ?? {},
    grant: options.grant ?? {},
    timeoutMs: options.timeoutMs ?? 10_000,
    sessionId: options.session ?? "s1",
    callId: crypto.randomUUID(),
    config: options.config ?? {},
    metadata: {},
    isolation: options.isolation ?? "warm",
  }, {
    signal: options.signal,
    onEvent: (kind, data) => events.push({ kind, data }),
    callTool: () => Promise.reject(new Error("No tools in this test")),
    chat: () => Promise.reject(new Error("No LLM in this test")),
  });
  return { outcome, events };
}

/** Asserts that the sandbox still serves an ordinary call. */
export async function assertNormalCallWorks(
  sandbox: SandboxPool,
): Promise<void> {
  const { outcome, events } = await callFixture(sandbox, "add", {
    args: { a: 2, b: 3 },
  });
  assert.deepEqual(outcome, { ok: true, value: { sum: 5 }, truncated: false });
  assert.deepEqual(events, [{
    kind: "progress",
    data: { pct: 50, message: "adding" },
  }]);
}

/** Asserts a successful outcome and returns its value. */
export function valueOf(outcome: SandboxOutcome): Record<string, unknown> {
  assert.equal(outcome.ok, true, JSON.stringify(outcome));
  return (outcome as { value: Record<string, unknown> }).value;
}

/** Resolves when `promise` settles, or throws after `ms`. */
export async function within<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: not within ${ms} ms`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether an OS process id is still alive and not a zombie (via `ps`). */
export async function processAlive(pid: number): Promise<boolean> {
  // `ps`, not /proc: Deno wants --allow-all for /proc/<pid>.
  const out = await new Deno.Command("ps", {
    args: ["-o", "stat=", "-p", String(pid)],
  }).output();
  const stat = new TextDecoder().decode(out.stdout).trim();
  // A zombie ("Z") burns no CPU and is only waiting to be reaped.
  return stat !== "" && !stat.startsWith("Z");
}
