/**
 * A web page on another origin, in headless Chromium, tries to drive a
 * host without tokens (the default): it opens `ws://…/a2e` and POSTs to
 * `/mcp`. Both must fail, with the host's door answering 403 before any
 * session exists. (Before the door, the WebSocket opened and the page
 * could run any tool.)
 *
 * Without Chromium the test is ignored (its name says so), except under
 * `CI`, where it fails: CI must install it (`.ci/run` does).
 */

import assert from "node:assert/strict";
import { createHost } from "../../runtime/host.ts";
import { chromiumTest, launchChromium } from "../support/chromium.ts";
import { browserTestTools } from "./_tools.ts";

const NAME =
  "a page on another origin cannot drive the host over /a2e or /mcp in headless Chromium";
/** How long the page may take to report, from launching the browser. */
const REPORT_TIMEOUT_MS = 15_000;

interface DoorsReport {
  websocket: string;
  mcp: string;
  failure?: string;
}

// The attacker's page: what a site the operator visits could run.
const PAGE_HTML = `<!doctype html>
<meta charset="utf-8">
<title>somewhere else</title>
<script type="module">
  const target = new URL(location.href).searchParams.get("target");
  const report = (body) => fetch("/report", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  try {
    const websocket = await new Promise((resolve) => {
      const socket = new WebSocket("ws://" + target + "/a2e");
      socket.onopen = () => { socket.close(); resolve("opened"); };
      socket.onerror = () => resolve("failed");
    });
    // A "simple" request: no preflight, so the host sees the POST itself.
    const mcp = await fetch("http://" + target + "/mcp", {
      method: "POST",
      mode: "no-cors",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({
        jsonrpc: "2.0", id: 1, method: "initialize",
        params: {
          protocolVersion: "2025-06-18", capabilities: {},
          clientInfo: { name: "page", version: "1" },
        },
      }),
    }).then((r) => "sent (" + r.type + ")", (e) => "failed: " + e.name);
    await report({ websocket, mcp });
  } catch (error) {
    await report({ websocket: "", mcp: "", failure: String(error) });
  }
</script>
`;

chromiumTest(NAME, async (chromium) => {
  const host = createHost({ capabilities: [browserTestTools] });
  // What the host answered, by path, as the browser's requests came in.
  const answered: string[] = [];
  const hostServer = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request, info) => {
      const response = await host.fetch(request, info);
      answered.push(
        `${request.method} ${new URL(request.url).pathname} ${response.status}`,
      );
      return response;
    },
  );
  const reported = Promise.withResolvers<DoorsReport>();
  const pageServer = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const { pathname } = new URL(request.url);
      if (request.method === "POST" && pathname === "/report") {
        reported.resolve(await request.json());
        return new Response(null, { status: 204 });
      }
      if (pathname === "/") {
        return new Response(PAGE_HTML, {
          headers: { "content-type": "text/html; charset=utf-8" },
        });
      }
      return new Response("not found", { status: 404 });
    },
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const page = new URL(`http://127.0.0.1:${pageServer.addr.port}/`);
    page.searchParams.set("target", `127.0.0.1:${hostServer.addr.port}`);
    await using browser = await launchChromium(chromium, page.href);
    const report = await Promise.race([
      reported.promise,
      browser.exited.then((status) => {
        throw new Error(
          `Chromium exited (code ${status.code}) before the page reported; ` +
            `its stderr:\n${browser.stderr()}`,
        );
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `The page did not report within ${REPORT_TIMEOUT_MS} ms; ` +
                  `Chromium's stderr:\n${browser.stderr()}`,
              ),
            ),
          REPORT_TIMEOUT_MS,
        );
      }),
    ]);
    assert.equal(report.failure, undefined, report.failure);
    assert.equal(report.websocket, "failed");
    // A no-cors answer is opaque to the page either way: what counts is
    // that the host refused it.
    assert.match(report.mcp, /^(sent \(opaque\)|failed: TypeError)$/);
    assert.deepEqual(answered.sort(), ["GET /a2e 403", "POST /mcp 403"]);
    assert.equal(host.sessionCount, 0);
  } finally {
    clearTimeout(timer);
    await pageServer.shutdown();
    await hostServer.shutdown();
    await host.close({ timeoutSeconds: 1 });
  }
});
