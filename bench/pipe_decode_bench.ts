/**
 * Decoding the sandbox pipe's messages on the warm call path: the decoders
 * `protocol/sandbox/pipe.ts` derives from its message table, against zod
 * schemas of the same messages. Run: `deno bench bench/pipe_decode_bench.ts`.
 * Measured on issue 23 (2 shared cores, avg per decode): decoders compiled
 * from the tables into straight-line code with `new Function` took, min /
 * median / max of 5 runs, host op 36 / 63 / 67 ns (the hand-written decoder
 * they replaced checked 3 of its 11 fields: 7 / 9 / 14 ns), worker result
 * 18 / 52 / 64 ns, sandbox result 19 / 34 / 74 ns, worker events 37 / 167 /
 * 332 ns. The plain loop kept instead (no generated code), 3 runs at load
 * 2–4: host op 285 / 356 / 406 ns, worker result 124 / 135 / 147, worker
 * events 168 / 176 / 209, sandbox result 131 / 137 / 144: under 1 µs of a
 * call of ~200–300 µs. zod: host op 435 / 979 / 1900 ns, worker result 44 /
 * 143 / 393, worker events 283 / 948 / 1000, sandbox result (a plain union:
 * two shapes share `t`) 432 / 495 / 745 (3 runs).
 *
 * @module
 */

import { z } from "zod";
import { ERROR_CODES } from "../protocol/codes.ts";
import {
  decodeHostMessage,
  decodeSandboxMessage,
  decodeWorkerMessage,
} from "../protocol/sandbox/pipe.ts";

// The three messages a warm call decodes, as JSON.parse leaves them.
const OP = {
  t: "op",
  id: "41",
  op: "call",
  path: "/skills/notes/tools/add.ts",
  export: "default",
  workerKey: "notes\u0000s1",
  args: { text: "hello", n: 3 },
  config: {},
  metadata: {},
  session: "s1",
  call: "c41",
};
const WORKER_RESULT = { t: "result", id: "41", ok: true, value: { n: 4 } };
const SANDBOX_RESULT = {
  t: "result",
  id: "41",
  ok: true,
  value: { n: 4 },
  truncated: false,
};
const EVENTS = {
  t: "events",
  batch: [{ id: "41", kind: "log", data: { message: "x" } }],
};

// Kept so no decoded message can be optimized away.
export let sink: unknown = null;

Deno.bench("pipe: host op", { group: "op" }, () => {
  sink = decodeHostMessage(OP);
});
Deno.bench("pipe: worker result", { group: "worker" }, () => {
  sink = decodeWorkerMessage(WORKER_RESULT);
});
Deno.bench("pipe: worker events", { group: "events" }, () => {
  sink = decodeWorkerMessage(EVENTS);
});
Deno.bench("pipe: sandbox result", { group: "sandbox" }, () => {
  sink = decodeSandboxMessage(SANDBOX_RESULT);
});

// The same messages as zod would read them (coercions as the pipe's).
const zodOp = z.looseObject({
  t: z.literal("op"),
  id: z.string(),
  op: z.enum(["call", "describe", "permissions"]),
  path: z.string(),
  export: z.string(),
  workerKey: z.string(),
  primeKey: z.string().optional(),
  args: z.unknown(),
  config: z.record(z.string(), z.unknown()),
  metadata: z.record(z.string(), z.unknown()),
  session: z.string(),
  call: z.string(),
});
const zodWorker = z.discriminatedUnion("t", [
  z.object({ t: z.literal("ready") }),
  z.object({ t: z.literal("loaded") }),
  z.object({
    t: z.literal("events"),
    batch: z.array(z.object({
      id: z.string(),
      kind: z.coerce.string(),
      data: z.record(z.string(), z.unknown()).catch({}),
    })).catch([]),
  }),
  z.object({
    t: z.literal("result"),
    id: z.string(),
    ok: z.literal(true),
    value: z.unknown(),
  }),
]);
// Two shapes share `t: "result"`: a plain union, tried in order.
const zodSandbox = z.union([
  z.object({ t: z.literal("ready") }),
  z.object({
    t: z.literal("result"),
    id: z.string(),
    ok: z.literal(true),
    value: z.unknown(),
    truncated: z.boolean().catch(false),
  }),
  z.object({
    t: z.literal("result"),
    id: z.string(),
    ok: z.literal(false),
    code: z.enum(ERROR_CODES).catch("sandbox_crash"),
    message: z.coerce.string(),
    retryable: z.boolean().catch(false),
  }),
]);

Deno.bench("zod: host op", { group: "op" }, () => {
  sink = zodOp.safeParse(OP);
});
Deno.bench("zod: worker result", { group: "worker" }, () => {
  sink = zodWorker.safeParse(WORKER_RESULT);
});
Deno.bench("zod: worker events", { group: "events" }, () => {
  sink = zodWorker.safeParse(EVENTS);
});
Deno.bench("zod: sandbox result", { group: "sandbox" }, () => {
  sink = zodSandbox.safeParse(SANDBOX_RESULT);
});
