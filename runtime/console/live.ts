/**
 * `GET /api/live`: Server-Sent Events of runs starting, their events, and
 * finishing. Each viewer has a bounded queue; a viewer that cannot keep up
 * loses events (counted), never slows a call.
 *
 * @module
 */

import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import {
  type LiveChange,
  liveOf,
  type LiveRun,
  type RunRecorder,
} from "../store/recorder.ts";
import { mayView, type RunScope } from "../store/store.ts";
import { liveView, runView } from "./api.ts";

const MAX_QUEUE = 2000;
const HEARTBEAT_MS = 15_000;

/** Options of {@link liveStream}. */
export interface LiveStreamOptions {
  /** The recorder to follow. */
  recorder: RunRecorder;
  /** Counts events the viewer missed. @default none */
  dropped?: (count: number) => void;
  /** Whose runs the viewer may see; others' are never queued. @default "all" */
  scope?: RunScope;
}

/**
 * Streams the recorder's changes to one viewer.
 *
 * @param c the request context
 * @param options the recorder, the drop counter and the viewer's scope
 * @returns the SSE response
 */
export function liveStream(c: Context, options: LiveStreamOptions): Response {
  const { recorder, dropped, scope = "all" } = options;
  c.header("Cache-Control", "no-store");
  return streamSSE(c, async (stream) => {
    const queue: LiveChange[] = [];
    let wake: (() => void) | null = null;
    let lost = 0;
    const unsubscribe = recorder.subscribe((change) => {
      if (!mayView(scope, ownerOf(change))) return;
      if (queue.length >= MAX_QUEUE) {
        lost++;
        return;
      }
      queue.push(change);
      wake?.();
    });
    const done = new Promise<void>((resolve) => stream.onAbort(resolve));
    let closed = false;
    done.then(() => {
      closed = true;
      wake?.();
    });
    try {
      const running = [
        ...recorder.running.filter((r) => mayView(scope, r.owner)),
        ...await otherHostsRunning(recorder, scope),
      ];
      await stream.writeSSE({
        event: "hello",
        data: JSON.stringify({
          running: running.map((r) => liveView(recorder, r)),
        }),
      });
      while (!closed) {
        if (queue.length === 0) {
          let timer: ReturnType<typeof setTimeout> | undefined;
          await new Promise<void>((resolve) => {
            wake = resolve;
            timer = setTimeout(resolve, HEARTBEAT_MS);
          });
          wake = null;
          clearTimeout(timer);
          if (queue.length === 0 && !closed) {
            await stream.writeSSE({ event: "ping", data: "{}" });
          }
          continue;
        }
        if (lost > 0) {
          dropped?.(lost);
          await stream.writeSSE({ event: "lost", data: String(lost) });
          lost = 0;
        }
        const change = queue.shift()!;
        await stream.writeSSE({
          event: change.type,
          data: encode(recorder, change),
        });
      }
    } finally {
      unsubscribe();
    }
  });
}

// The live view's snapshot: none of the other hosts' runs when the store
// is out of reach (the viewer still gets this host's and every change
// from now on).
async function otherHostsRunning(
  recorder: RunRecorder,
  scope: RunScope,
): Promise<LiveRun[]> {
  try {
    return await fleetRunning(recorder, scope);
  } catch {
    return [];
  }
}

/**
 * In a fleet (a store other hosts write), the runs the other hosts have
 * written `running` and not finished (in `scope`), oldest first; a dead
 * host's stay until it restarts and marks them `interrupted`.
 *
 * @param recorder this host's recorder (its store and host id)
 * @param scope whose runs
 * @returns the runs (none without a shared store)
 * @throws {Error} when the store cannot be read
 * @example Without a shared store there is no fleet
 * ```ts
 * import { fleetRunning } from "./live.ts";
 * import { openRecorder } from "../store/recorder.ts";
 * import assert from "node:assert/strict";
 * const recorder = openRecorder({ path: ":memory:", maxRuns: 10, maxAgeDays: 1 });
 * assert.deepEqual(await fleetRunning(recorder, "all"), []);
 * await recorder.close();
 * ```
 */
export async function fleetRunning(
  recorder: RunRecorder,
  scope: RunScope,
): Promise<LiveRun[]> {
  const store = recorder.store;
  if (!store?.follow) return [];
  const page = await store.list({
    outcome: "running",
    owner: scope === "all" ? undefined : scope.owner,
    limit: 500,
  });
  return page.runs.filter((r) => r.host !== recorder.host).map(liveOf)
    .reverse();
}

function ownerOf(change: LiveChange): string | null | undefined {
  return change.type === "event" ? change.owner : change.run.owner;
}

function encode(recorder: RunRecorder, change: LiveChange): string {
  switch (change.type) {
    case "started":
      return JSON.stringify(liveView(recorder, change.run));
    case "finished":
      return JSON.stringify(runView(change.run));
    case "event": {
      const { seq, kind } = change.event;
      const data = recorder.redactor.json(change.event.data, {
        maxChars: 4096,
      });
      return `{"run_id":${JSON.stringify(change.runId)},"seq":${seq},"kind":${
        JSON.stringify(kind)
      },"data":${data}}`;
    }
  }
}
