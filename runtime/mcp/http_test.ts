import assert from "node:assert/strict";
import { guardRequest } from "./http.ts";

function request(headers: Record<string, string>): Request {
  return new Request("http://localhost:8080/mcp", { method: "POST", headers });
}

Deno.test("guardRequest() refuses a missing or wrong bearer token with 401 and a challenge", async (t) => {
  for (
    const [name, headers, message] of [
      ["missing", {}, "Missing bearer token"],
      ["wrong", { authorization: "Bearer nope" }, "Invalid bearer token"],
    ] as const
  ) {
    await t.step(name, async () => {
      const refused = guardRequest(request(headers), ["secret"]);
      assert.ok(refused instanceof Response);
      assert.equal(refused.status, 401);
      assert.equal(
        refused.headers.get("www-authenticate"),
        'Bearer realm="skillbox"',
      );
      assert.deepEqual(await refused.json(), { error: message });
    });
  }
});

Deno.test('guardRequest() passes the token, or "" when no tokens are configured', () => {
  assert.equal(
    guardRequest(request({ authorization: "Bearer secret" }), ["secret"]),
    "secret",
  );
  assert.equal(guardRequest(request({}), []), "");
});
