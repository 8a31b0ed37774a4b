/**
 * The step bound of the host's JSON Schema validator
 * (`runtime/schema/validator.ts`): how long one validation of a hostile
 * value takes as its depth grows until the bound refuses it, and what the
 * counting adds to a trivial tool's arguments (against cfworker's
 * `Validator` on the same schema, uncounted). Figures are CPU time of this
 * thread. Run: `deno task bench schema`.
 *
 * @module
 */

import process from "node:process";
import { type Schema, Validator } from "@cfworker/json-schema";
import {
  MAX_SCHEMA_STEPS,
  validateValue,
} from "../runtime/schema/validator.ts";
import type { Bench } from "./main.ts";

// `L` applies itself twice to the child `a`: work doubles at each level.
const branch = () => ({ properties: { a: { $ref: "#/$defs/L" } } });
const HOSTILE = {
  type: "object",
  properties: { x: { $ref: "#/$defs/L" } },
  $defs: { L: { allOf: [branch(), branch()] } },
};

const TRIVIAL = {
  type: "object",
  properties: { text: { type: "string" }, n: { type: "number" } },
  required: ["text"],
  additionalProperties: false,
};
const TRIVIAL_ARGS = { text: "hello", n: 3 };

// One object per level, a single path down (never a shared child: that
// value would have 2^depth paths).
function chain(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return { x: value };
}

// CPU ms of `run`, min / median / max of `runs`.
function cpuMs(runs: number, run: () => void): string {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.cpuUsage();
    run();
    const used = process.cpuUsage(start);
    times.push((used.user + used.system) / 1000);
  }
  times.sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(n < 10 ? 2 : 0);
  return `${f(times[0]!)} / ${f(times[runs >> 1]!)} / ${
    f(times[runs - 1]!)
  } ms`;
}

/** Hostile validations by depth, and the warm path's per-call cost. */
export const schemaStepsBench: Bench = {
  name: "schema steps",
  run(): Promise<string[]> {
    const lines = [
      `bound: ${MAX_SCHEMA_STEPS.toLocaleString("en-US")} steps per validation`,
    ];
    // The warm path first, before the hostile shapes reach the validator.
    const plain = new Validator(
      structuredClone(TRIVIAL) as Schema,
      "2020-12",
      false,
    );
    const calls = 200_000;
    const perCall = (run: () => void) => {
      const time = cpuMs(5, () => {
        for (let i = 0; i < calls; i++) run();
      });
      return time.replace(
        /[\d.]+/g,
        (ms) => `${(Number(ms) * 1000 / calls).toFixed(2)}`,
      ).replace(" ms", " µs");
    };
    lines.push(
      `trivial arguments, host validator (counted): ${
        perCall(() => validateValue(TRIVIAL, TRIVIAL_ARGS))
      } per call`,
      `trivial arguments, cfworker uncounted: ${
        perCall(() => plain.validate(TRIVIAL_ARGS))
      } per call`,
    );
    for (const depth of [10, 12, 14, 16, 20, 40]) {
      const value = chain(depth);
      const result = validateValue(HOSTILE, value);
      const time = cpuMs(5, () => validateValue(HOSTILE, value));
      lines.push(
        `hostile, depth ${depth}: ${
          result.valid ? "checked" : "refused"
        } in ${time} (min / median / max of 5)`,
      );
    }
    return Promise.resolve(lines);
  },
};
