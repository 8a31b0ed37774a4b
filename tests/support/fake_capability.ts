/**
 * A fake "tools" capability for tests: it proves handlers plug into the
 * dispatcher, that events stream through `session.send`, and that a call's
 * `signal` aborts when its session ends.
 *
 * Tools: `echo` returns its arguments; `stream` sends `count` events first;
 * `hang` waits until its signal aborts (recording the abort), `gate` waits
 * until the test opens it.
 *
 * @module
 */

import type { Capability } from "../../runtime/capability.ts";
import { encodeEvent } from "../../protocol/responses.ts";
import { tool, toolOutcome } from "../../protocol/tool.ts";

/** The fake capability plus what tests observe through it. */
export interface FakeTools {
  capability: Capability;
  /** Resolves with the abort reason when a `hang` call is cancelled. */
  aborted: Promise<unknown>;
  /** Resolves when a `hang` call has started. */
  hanging: Promise<void>;
  /** How many `gate` calls are running now; the most seen at once. */
  gate: {
    running: number;
    peak: number;
    /** Lets every running `gate` call finish. */
    open(): void;
    /** Resolves once `count` gate calls run at once. */
    whenRunning(count: number): Promise<void>;
  };
}

/**
 * Builds a fresh fake capability.
 *
 * @example
 * ```ts ignore
 * const fake = fakeTools();
 * createHost({ capabilities: [fake.capability] });
 * ```
 */
export function fakeTools(): FakeTools {
  const aborted = Promise.withResolvers<unknown>();
  const hanging = Promise.withResolvers<void>();
  let opened = Promise.withResolvers<void>();
  const watchers: Array<{ count: number; resolve: () => void }> = [];
  const gate = {
    running: 0,
    peak: 0,
    open() {
      opened.resolve();
      opened = Promise.withResolvers<void>();
    },
    whenRunning(count: number) {
      if (gate.running >= count) return Promise.resolve();
      return new Promise<void>((resolve) => watchers.push({ count, resolve }));
    },
  };
  const capability: Capability = {
    name: "tools",
    handlers: {
      "tool/list/req": () =>
        Promise.resolve({
          tools: ["echo", "stream", "hang", "gate"].map((name) =>
            tool({ name, description: `Fake ${name}` })
          ),
        }),
      "tool/call/req": async ({ request, session, signal }) => {
        const started = performance.now();
        const args = request.arguments;
        if (request.toolName === "stream") {
          for (let seq = 0; seq < Number(args.count ?? 3); seq++) {
            session.send(encodeEvent("tool/event", request.id, {
              kind: "progress",
              data: { pct: seq, message: `step ${seq}` },
              seq,
            }));
          }
        } else if (request.toolName === "hang") {
          hanging.resolve();
          await new Promise((resolve) => {
            signal.addEventListener("abort", resolve, { once: true });
          });
          aborted.resolve(signal.reason);
          throw signal.reason;
        } else if (request.toolName === "gate") {
          gate.running++;
          gate.peak = Math.max(gate.peak, gate.running);
          for (const w of watchers.filter((w) => gate.running >= w.count)) {
            watchers.splice(watchers.indexOf(w), 1);
            w.resolve();
          }
          await opened.promise;
          gate.running--;
        }
        return {
          result: toolOutcome({
            success: true,
            toolName: request.toolName,
            data: args,
            durationMs: Math.round(performance.now() - started),
          }),
        };
      },
    },
  };
  return {
    capability,
    aborted: aborted.promise,
    hanging: hanging.promise,
    gate,
  };
}
