import assert from "node:assert/strict";
import { allowedByAll, hostMatches } from "./hosts.ts";

Deno.test("hostMatches() matches hosts and ports like --allow-net", () => {
  const u = (s: string) => new URL(s);
  assert.ok(hostMatches(u("https://api.example.com/x"), "api.example.com"));
  assert.ok(hostMatches(u("https://API.example.com:8443/"), "api.example.com"));
  assert.ok(hostMatches(u("https://api.example.com/"), "api.example.com:443"));
  assert.ok(!hostMatches(u("http://api.example.com/"), "api.example.com:443"));
  assert.ok(
    !hostMatches(u("https://evil-api.example.com/"), "api.example.com"),
  );
  assert.ok(
    !hostMatches(u("https://api.example.com.evil.io/"), "api.example.com"),
  );
  assert.ok(hostMatches(u("http://[::1]:80/"), "[::1]"));
  assert.ok(hostMatches(u("http://[::1]:80/"), "[::1]:80"));
  assert.ok(hostMatches(u("http://[::1]:80/"), "::1"));
  assert.ok(hostMatches(u("http://[::ffff:127.0.0.1]/"), "[::ffff:127.0.0.1]"));
  assert.ok(hostMatches(u("http://[0:0::1]:8/"), "[::0:1]:8"));
  assert.ok(hostMatches(u("https://anything.io/"), "*"));
  assert.ok(!hostMatches(u("https://anything.io/"), "anything.io:*"));
});

Deno.test("allowedByAll() needs a match in every list", () => {
  const url = new URL("https://a.io/");
  assert.ok(allowedByAll(url, [["a.io"], ["*", "b.io"]]));
  assert.ok(!allowedByAll(url, [["a.io"], []]));
});
