import assert from "node:assert/strict";
import { skillOutcome } from "./skill.ts";

Deno.test("skillOutcome() fills every A2E default and keeps what is given", () => {
  assert.deepEqual(skillOutcome({ success: true, durationMs: 4 }), {
    success: true,
    durationMs: 4,
    data: null,
    summary: null,
    truncated: false,
    error: null,
    errorCode: null,
    events: [],
  });
  const failed = skillOutcome({
    success: false,
    durationMs: 1,
    errorCode: "timeout",
    events: [{ kind: "log", data: {}, seq: 0 }],
  });
  assert.equal(failed.errorCode, "timeout");
  assert.equal(failed.events.length, 1);
  // Each call has its own list of events.
  skillOutcome({ success: true, durationMs: 0 }).events.push(failed.events[0]!);
  assert.deepEqual(skillOutcome({ success: true, durationMs: 0 }).events, []);
});
