/**
 * A count of work for tests that catch a super-linear cost without timing
 * it (the project's rule: timing belongs in benchmarks).
 *
 * @module
 */

const METHODS = ["some", "every", "filter", "find", "findIndex", "forEach"];

/**
 * Calls of the callbacks given to `Array.prototype`'s iterating methods while
 * `run` runs: a pass over every pair of n things makes it grow as n squared.
 *
 * @param run the work to count
 * @returns how many callbacks ran
 * @example A pass over every pair grows as n squared
 * ```ts
 * import { callbacksDuring } from "./callbacks.ts";
 * import assert from "node:assert/strict";
 * const pairs = (n: number) => {
 *   const items = Array.from({ length: n }, (_, i) => i);
 *   return callbacksDuring(() => items.forEach(() => items.forEach(() => {})));
 * };
 * assert.ok(pairs(200) > 3 * pairs(100));
 * ```
 */
export function callbacksDuring(run: () => void): number {
  const originals = METHODS.map((name) =>
    Object.getOwnPropertyDescriptor(Array.prototype, name)!
  );
  let calls = 0;
  for (const [i, name] of METHODS.entries()) {
    const original = originals[i]!.value;
    Object.defineProperty(Array.prototype, name, {
      ...originals[i],
      value(
        this: unknown[],
        test: (...a: unknown[]) => unknown,
        self: unknown,
      ) {
        const counted = (
          ...args: unknown[]
        ) => (calls++, test.apply(self, args));
        return original.call(this, counted);
      },
    });
  }
  try {
    run();
  } finally {
    METHODS.forEach((name, i) =>
      Object.defineProperty(Array.prototype, name, originals[i]!)
    );
  }
  return calls;
}
