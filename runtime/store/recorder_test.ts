import assert from "node:assert/strict";
import { RunRecorder } from "./recorder.ts";
import { openSqliteStore } from "./sqlite.ts";
import { fakeSession } from "../../tests/support/skill_fakes.ts";

const session = fakeSession();

Deno.test("a recorded run's id begins with its start time, so the store's keys grow in order", async () => {
  const recorder = new RunRecorder({ store: openSqliteStore(":memory:") });
  const ids = [0, 1, 2].map((i) =>
    recorder.started({ kind: "tool", name: "add", session, args: { i } })
  );
  for (const live of recorder.running) {
    assert.match(live.id, /^[0-9a-f]{32}$/);
    assert.equal(parseInt(live.id.slice(0, 12), 16), live.startedAt);
  }
  for (const id of ids) recorder.finished(id, { outcome: "ok", result: 1 });
  await recorder.flush();
  assert.deepEqual(
    (await recorder.store?.list({}))?.runs.map((r) => r.id),
    [...ids].reverse(),
  );
  await recorder.close();
});
