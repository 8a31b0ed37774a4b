import assert from "node:assert/strict";
import { redactUrl, sameBaseUrl } from "./base_url.ts";

Deno.test("sameBaseUrl() compares endpoints, unset meaning the official API", () => {
  assert.ok(sameBaseUrl("anthropic", undefined, "https://api.anthropic.com/"));
  assert.ok(sameBaseUrl("openai", "http://h.test/v1//", "http://h.test/v1"));
  assert.ok(!sameBaseUrl("openai", undefined, "https://api.anthropic.com"));
  assert.ok(!sameBaseUrl("openai", "http://h.test/v1", "http://h.test/v2"));
  // A lookalike host is another endpoint.
  assert.ok(
    !sameBaseUrl("openai", "https://api.openai.com.evil.test/v1", undefined),
  );
});

Deno.test("redactUrl() drops userinfo, query and fragment, keeps the path", () => {
  assert.equal(
    redactUrl("https://user:sk-1@proxy.test/v1/?api_key=sk-2#sk-3"),
    "https://proxy.test/v1/",
  );
  assert.equal(redactUrl("https://x.test/"), "https://x.test");
  assert.equal(redactUrl("::"), "");
});
