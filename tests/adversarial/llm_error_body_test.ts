/**
 * A provider that fails with a huge error body, against a real host: the
 * SDKs read an error body whole (`response.text()`) before they throw, and
 * a body broken by blank lines looked like many small SSE events to the
 * event bound. Whatever its shape, an error body past the bound fails the
 * call with a short error naming the limit, and the provider's connection
 * is closed instead of read to its end.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost } from "../../runtime/host.ts";
import { parseConfig } from "../../runtime/config.ts";
import { connectA2e } from "../support/skills_host.ts";
import type { SkillResult } from "../../protocol/skill.ts";

const OPTS = { sanitizeOps: false, sanitizeResources: false };
// 32 MiB in lines of 8 bytes, each followed by a blank line.
const BODY_BYTES = 32 * 1024 * 1024;

for (const dialect of ["openai", "anthropic"] as const) {
  Deno.test(
    `${dialect}: an error body of 32 MiB broken by blank lines fails the call at the bound, unread`,
    OPTS,
    async () => {
      let sent = 0;
      const closed = Promise.withResolvers<void>();
      const server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        () => {
          const chunk = new TextEncoder().encode("error\n\n\n".repeat(8192));
          const body = new ReadableStream<Uint8Array>({
            pull(controller) {
              if (sent >= BODY_BYTES) return controller.close();
              sent += chunk.length;
              controller.enqueue(chunk);
            },
            cancel: () => closed.resolve(),
          });
          return new Response(body, {
            status: 500,
            headers: { "content-type": "text/plain" },
          });
        },
      );
      const base = `http://127.0.0.1:${server.addr.port}${
        dialect === "openai" ? "/v1" : ""
      }`;
      const dir = await Deno.makeTempDir({ prefix: "skillbox-llm-errbody-" });
      await Deno.mkdir(join(dir, "plain"));
      await Deno.writeTextFile(
        join(dir, "plain", "SKILL.md"),
        "---\nname: plain\ndescription: Answers with the model's words (tests only).\n---\n\nSay ok.\n",
      );
      const config = parseConfig(JSON.stringify({
        skills: [dir],
        builtin_skills: false,
        sandbox: { cache_dir: null },
        llm: {
          providers: [{
            provider_name: dialect,
            provider_credentials: { api_key: "operator-key" },
            provider_config: { base_url: base, model: "m" },
          }],
          max_response_bytes: 65536,
        },
      }));
      const host = createHost({ config });
      try {
        const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
        await host.ready;
        const agent = await connectA2e(url.replace("http", "ws") + "/a2e");
        try {
          const result = (await agent.request({
            type: "skill/call/req",
            name: "plain",
            arguments: { task: "go" },
            timeout: 60,
          })).message.data as SkillResult;
          assert.equal(result.success, false);
          assert.ok(
            (result.error ?? "").length < 2000,
            `the error carries the body: ${(result.error ?? "").length} chars`,
          );
          // The host stopped reading: the body was cancelled, not drained.
          assert.ok(sent < BODY_BYTES, `the host read ${sent} bytes`);
          await closed.promise;
          assert.match(
            result.error ?? "",
            /LLM endpoint answered HTTP 500 with an error body of more than \d+ bytes/,
          );
        } finally {
          await agent.close();
        }
      } finally {
        await host.close({ timeoutSeconds: 1 });
        await server.shutdown();
        await Deno.remove(dir, { recursive: true });
      }
    },
  );
}
