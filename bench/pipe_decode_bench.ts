/**
 * Decoding the sandbox pipe's messages on the warm call path: the decoders
 * `protocol/sandbox/pipe.ts` derives from its message table, against zod
 * schemas of the same messages. Run: `deno bench bench/pipe_decode_bench.ts`.
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

Deno.bench("pipe: host op", { group: "op" }, () => {
  if (decodeHostMessage(OP) === null) throw 0;
});
Deno.bench("pipe: worker result", { group: "worker" }, () => {
  if (decodeWorkerMessage(WORKER_RESULT) === null) throw 0;
});
Deno.bench("pipe: worker events", { group: "events" }, () => {
  if (decodeWorkerMessage(EVENTS) === null) throw 0;
});
Deno.bench("pipe: sandbox result", { group: "sandbox" }, () => {
  if (decodeSandboxMessage(SANDBOX_RESULT) === null) throw 0;
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
const zodSandbox = z.discriminatedUnion("t", [
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
  if (!zodOp.safeParse(OP).success) throw 0;
});
Deno.bench("zod: worker result", { group: "worker" }, () => {
  if (!zodWorker.safeParse(WORKER_RESULT).success) throw 0;
});
Deno.bench("zod: worker events", { group: "events" }, () => {
  if (!zodWorker.safeParse(EVENTS).success) throw 0;
});
Deno.bench("zod: sandbox result", { group: "sandbox" }, () => {
  if (!zodSandbox.safeParse(SANDBOX_RESULT).success) throw 0;
});
