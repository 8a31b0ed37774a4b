/**
 * A hostile (or careless) MCP client of the host's `/mcp` endpoint: what it
 * leaves behind on the host must be freed.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { MCP_POST_HEADERS, rawSession } from "../support/mcp_client.ts";
import { created } from "../support/mcp_fixtures.ts";
import { withHost } from "./_host.ts";

Deno.test("a silent call the client cancels ends its POST at once, with no answer", async () => {
  await withHost({}, async ({ url, markers }) => {
    const session = await rawSession(url);
    const started = join(markers, "started");
    const held = join(markers, "held");
    // No progress token: the answer the session sends itself, as JSON or
    // (past its grace time) as SSE.
    const res = await session.post({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "hold", arguments: { started, marker: held } },
    });
    const body = res.text();
    await created(started, 10_000);
    const cancel = await session.post({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 3, reason: "changed my mind" },
    });
    assert.equal(cancel.status, 202);
    await cancel.body?.cancel();
    await created(held, 10_000);
    assert.equal(await Deno.readTextFile(held), "aborted");
    // Ending the session ends a POST the cancellation left open, with an
    // error event naming the closed session: there must be none.
    const del = await fetch(url + "/mcp", {
      method: "DELETE",
      headers: { "mcp-session-id": session.id },
    });
    await del.body?.cancel();
    const sent = (await body).split("\n").filter((l) => l.startsWith("data:"));
    assert.deepEqual(sent, []);
  });
});

Deno.test("a call with a progress token the client cancels ends its SSE stream", async () => {
  await withHost({}, async ({ url, markers }) => {
    const session = await rawSession(url);
    const marker = join(markers, "waited");
    // With a progress token the answer is the SDK transport's SSE stream.
    const res = await session.post({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: {
        name: "wait_for_abort",
        arguments: { marker },
        _meta: { progressToken: "p" },
      },
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes("notifications/progress")) {
      const { done, value } = await reader.read();
      assert.ok(!done, "the stream ended before the call started");
      seen += value;
    }
    const cancel = await session.post({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 4, reason: "changed my mind" },
    });
    assert.equal(cancel.status, 202);
    await cancel.body?.cancel();
    await created(marker, 10_000);
    // The stream ends with the session still open; the bound only turns a
    // stream left open into a failure rather than a hung test.
    const ended = (async () => {
      while (true) {
        const { done, value } = await reader.read();
        if (done) return "ended";
        seen += value;
      }
    })();
    const bound = Promise.withResolvers<string>();
    const timer = setTimeout(() => bound.resolve("still open"), 10_000);
    const outcome = await Promise.race([ended, bound.promise]);
    clearTimeout(timer);
    const del = await fetch(url + "/mcp", {
      method: "DELETE",
      headers: { "mcp-session-id": session.id },
    });
    await del.body?.cancel();
    await ended;
    assert.equal(outcome, "ended");
    // No answer was sent for the cancelled request.
    assert.doesNotMatch(seen, /"id":4/);
  });
});

Deno.test("a POST opening a session whose body fails midway leaves no host session behind", async () => {
  await withHost({}, async ({ host, url }) => {
    // With a Content-Length and without (a chunked body): two ways of
    // reading it.
    for (const length of ["1000", undefined]) {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"jsonrpc":"2.0",'));
          // The client goes away before the rest.
          controller.error(new Error("connection reset"));
        },
      });
      const headers: Record<string, string> = { ...MCP_POST_HEADERS };
      if (length !== undefined) headers["content-length"] = length;
      const res = await host.fetch(
        new Request(url + "/mcp", { method: "POST", headers, body }),
      );
      await res.body?.cancel();
      assert.equal(host.sessionCount, 0, `content-length ${length}`);
    }
  });
});
