import assert from "node:assert/strict";
import {
  failure,
  NO_SECRETS,
  ranOutcome,
  sandboxBroke,
  scrub,
} from "./call_outcome.ts";
import { output } from "../../protocol/output.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import type { ToolEntry } from "../registry/types.ts";
import type { CallEvent } from "../../protocol/tool.ts";

const entry = { name: "peek", toolkit: "kit" } as ToolEntry;
const none = { events: [] as CallEvent[], eventsCut: false };

Deno.test("failure() scrubs the toolkit's secrets from the sentence", () => {
  const out = failure(
    entry,
    "tool_error",
    "bad key s3cret",
    ["s3cret"],
    performance.now(),
  );
  assert.equal(out.result.success, false);
  assert.equal(out.result.toolName, "peek");
  assert.equal(out.result.error?.includes("s3cret"), false);
  assert.equal(out.entry, entry);
});

Deno.test("ranOutcome() reads an Output: data, summary, exit code, break_loop", () => {
  const out = ranOutcome(
    entry,
    {
      ok: true,
      value: output({
        data: { n: 1 },
        summary: "one",
        exit_code: 3,
        break_loop: true,
      }),
      truncated: false,
    },
    none,
    NO_SECRETS,
    performance.now(),
  );
  assert.deepEqual(out.result.data, { n: 1 });
  assert.equal(out.result.summary, "one");
  assert.equal(out.result.exitCode, 3);
  assert.equal(out.breakLoop, true);
});

Deno.test("ranOutcome() marks a result truncated when events were cut or the value was", () => {
  const event: CallEvent = { kind: "log", data: {}, seq: 0 };
  const cut = ranOutcome(
    entry,
    { ok: true, value: 1, truncated: false },
    { events: [event], eventsCut: true },
    NO_SECRETS,
    performance.now(),
  );
  assert.equal(cut.result.truncated, true);
  assert.deepEqual(cut.result.events, [event]);
  const big = ranOutcome(
    entry,
    { ok: true, value: 1, truncated: true },
    none,
    NO_SECRETS,
    performance.now(),
  );
  assert.equal(big.result.truncated, true);
});

Deno.test("ranOutcome() turns a failed outcome into a failed result, scrubbed", () => {
  const out = ranOutcome(
    entry,
    {
      ok: false,
      code: "timeout",
      message: "stuck on s3cret",
      retryable: true,
    },
    none,
    ["s3cret"],
    performance.now(),
  );
  assert.equal(out.result.success, false);
  assert.equal(out.result.errorCode, "timeout");
  assert.equal(out.result.error?.includes("s3cret"), false);
  assert.equal(out.breakLoop, false);
});

Deno.test("sandboxBroke() keeps a SkillboxError's code and says sandbox_crash otherwise", () => {
  const coded = sandboxBroke(new SkillboxError("timeout", "late"));
  assert.ok(!coded.ok && coded.code === "timeout" && coded.message === "late");
  const thrown = sandboxBroke("text");
  assert.ok(!thrown.ok && thrown.code === "sandbox_crash");
  assert.ok(!thrown.ok && thrown.message === "text");
});

Deno.test("scrub() walks a value only when there are secrets", () => {
  const value = { a: "s3cret" };
  assert.equal(scrub(value, NO_SECRETS), value);
  assert.deepEqual(
    JSON.stringify(scrub(value, ["s3cret"])).includes("s3cret"),
    false,
  );
});
