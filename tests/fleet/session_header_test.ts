// A load balancer sticks an HTTP+SSE session to its host by a header: the
// id `POST /a2e/session` returns in its body is in `X-Session-Id` too.
import assert from "node:assert/strict";
import { startHost } from "../support/host.ts";

Deno.test("POST /a2e/session returns the new session's id in X-Session-Id", async () => {
  await using t = await startHost();
  const res = await fetch(`${t.sseUrl}/session`, { method: "POST" });
  const body = await res.json();
  assert.equal(res.status, 200);
  assert.equal(typeof body.session_id, "string");
  assert.equal(res.headers.get("x-session-id"), body.session_id);
});
