/**
 * Load progress for the terminal: a cold load of many modules takes seconds,
 * so once one has run for a while the host says how far it is, a few times a
 * second at most, then how it ended.
 *
 * @module
 */

/** Where a registry load stands. */
export interface LoadProgress {
  /** Modules read so far (from cache or described). */
  done: number;
  /** Modules this load reads. */
  total: number;
  /** Milliseconds since this load started. */
  elapsedMs: number;
}

/** Options of {@link progressLogger}. */
export interface ProgressLoggerOptions {
  /** Quiet until a load has run this long. @default 1000 */
  delayMs?: number;
  /** Least time between two progress lines. @default 250 */
  intervalMs?: number;
}

/**
 * Turns load progress into log lines: nothing for a load that ends within
 * `delayMs`; otherwise `loading skills: 412/1000 modules` at most every
 * `intervalMs`, and a final `loaded skills: 1000 modules in 3.2 s`.
 *
 * @param log where lines go (the host's log: stderr)
 * @param options delay and interval
 * @returns the `onProgress` callback of `loadRegistry`
 * @example A slow load
 * ```ts
 * import { progressLogger } from "./progress.ts";
 * import assert from "node:assert/strict";
 * const lines: string[] = [];
 * const onProgress = progressLogger((l) => lines.push(l));
 * onProgress({ done: 1, total: 3, elapsedMs: 500 });
 * onProgress({ done: 2, total: 3, elapsedMs: 1200 });
 * onProgress({ done: 3, total: 3, elapsedMs: 1300 });
 * assert.deepEqual(lines, [
 *   "loading skills: 2/3 modules",
 *   "loaded skills: 3 modules in 1.3 s",
 * ]);
 * ```
 */
export function progressLogger(
  log: (line: string) => void,
  options: ProgressLoggerOptions = {},
): (progress: LoadProgress) => void {
  const delayMs = options.delayMs ?? 1000;
  const intervalMs = options.intervalMs ?? 250;
  let lastAt = -Infinity;
  let printed = false;
  return ({ done, total, elapsedMs }) => {
    if (done >= total) {
      if (printed || elapsedMs >= delayMs) {
        log(
          `loaded skills: ${total} modules in ${
            (elapsedMs / 1000).toFixed(1)
          } s`,
        );
      }
      printed = false;
      lastAt = -Infinity;
      return;
    }
    if (elapsedMs < delayMs || elapsedMs - lastAt < intervalMs) return;
    lastAt = elapsedMs;
    printed = true;
    log(`loading skills: ${done}/${total} modules`);
  };
}
