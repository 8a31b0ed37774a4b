/**
 * The operator's own LLM endpoint answering with a redirect, against a real
 * host: a redirect to another origin (here a victim on loopback, standing
 * for a metadata or internal address the provider cannot reach itself) is
 * not followed, so the victim sees no request, neither the conversation
 * nor any header; the call fails saying where it was sent. A redirect on
 * the endpoint's own origin is still followed.
 */

import assert from "node:assert/strict";
import { startMockAnthropic } from "../support/mock_anthropic.ts";
import { callPlain, startLlmHost } from "./_llm_host.ts";

const OPTS = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "the operator's LLM endpoint redirecting to another origin is not followed and its key goes nowhere else; a redirect on its own origin is",
  OPTS,
  async () => {
    const victim = startMockAnthropic(() => ({ tokens: ["victim reached"] }));
    let endpoint = "";
    const operator = startMockAnthropic((r) =>
      r.index === 0 ? { redirect: `${victim.url}/v1/messages` } : r.index === 1
        // Same origin: followed, answered by the next turn.
        ? { redirect: `${endpoint}/v1/messages` }
        : { tokens: ["operator ok"] }
    );
    endpoint = operator.url;
    try {
      await using llm = await startLlmHost("anthropic", {
        baseUrl: operator.url,
      });
      const agent = await llm.connect();
      const away = await callPlain(agent);
      assert.equal(
        victim.requests.length,
        0,
        "the redirect to another origin was followed",
      );
      assert.equal(away.success, false);
      assert.match(
        away.error ?? "",
        new RegExp(
          `LLM endpoint "${
            operator.url.replaceAll(".", "\\.")
          }" redirected to another origin, "${
            victim.url.replaceAll(".", "\\.")
          }": not followed`,
        ),
      );
      const home = await callPlain(agent);
      assert.equal(home.success, true, home.error ?? "");
      assert.equal(operator.requests.length, 3);
    } finally {
      await Promise.all([operator.close(), victim.close()]);
    }
  },
);
