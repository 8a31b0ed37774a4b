/**
 * The TS client in a real browser: `client/mod.ts` bundled with
 * `deno bundle --platform browser`, loaded by a page in headless Chromium,
 * talking to a real host (`createHost`) over a real WebSocket. The page
 * connects with a token, pings, lists tools, calls one while iterating its
 * events with `for await`, calls an unknown tool, closes, and POSTs what it
 * saw to `/report`, which this test checks.
 *
 * Without Chromium the test is ignored (its name says so), except under `CI`,
 * where it fails: CI must install it (`.ci/run` does).
 */

import assert from "node:assert/strict";
import { createHost } from "../../runtime/host.ts";
import { bundleForBrowser } from "./_bundle.ts";
import { chromiumTest, launchChromium } from "../support/chromium.ts";
import type { BrowserReport } from "./_page.ts";
import { browserTestTools } from "./_tools.ts";

const NAME = "client works in headless Chromium against a real host";
const TOKEN = "browser-token";
/** How long the page may take to report, from launching the browser. */
const REPORT_TIMEOUT_MS = 15_000;

const PAGE_HTML = `<!doctype html>
<meta charset="utf-8">
<title>skillbox client in the browser</title>
<script>
  // A page script that fails to load or parse still reports.
  const fail = (failure) => fetch("/report", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ steps: [], failure: String(failure) }),
  });
  addEventListener("error", (event) => fail(event.message || event.type));
</script>
<script type="module" src="/page.js" onerror="fail('page.js failed to load')"></script>
`;

chromiumTest(NAME, async (chromium) => {
  const [clientJs, pageJs] = await Promise.all([
    bundleForBrowser(new URL("../../client/mod.ts", import.meta.url)),
    bundleForBrowser(new URL("./_page.ts", import.meta.url)),
  ]);
  assert.doesNotMatch(clientJs, /\bDeno\./, "the bundle uses no Deno API");

  const reported = Promise.withResolvers<BrowserReport>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const { pathname } = new URL(request.url);
      const js = { "content-type": "text/javascript; charset=utf-8" };
      if (request.method === "POST" && pathname === "/report") {
        reported.resolve(await request.json());
        return new Response(null, { status: 204 });
      }
      if (pathname === "/") {
        return new Response(PAGE_HTML, {
          headers: { "content-type": "text/html; charset=utf-8" },
        });
      }
      if (pathname === "/page.js") {
        return new Response(pageJs, { headers: js });
      }
      if (pathname === "/client.js") {
        return new Response(clientJs, { headers: js });
      }
      return new Response("not found", { status: 404 });
    },
  );
  // The page is on another origin: the host lets it in only because
  // the operator listed it (listen.allowed_origins).
  const host = createHost({
    config: {
      tokens: [TOKEN],
      listen: {
        allowedOrigins: [`http://127.0.0.1:${server.addr.port}`],
      },
    },
    capabilities: [browserTestTools],
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const address = await host.listen({ hostname: "127.0.0.1", port: 0 });
    const wsUrl = `ws://127.0.0.1:${address.port}/a2e`;
    const page = new URL(`http://127.0.0.1:${server.addr.port}/`);
    page.searchParams.set("ws", wsUrl);
    page.searchParams.set("token", TOKEN);

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

    assert.equal(report.failure, null, `the page failed: ${report.failure}`);
    assert.deepEqual(report.steps, [
      "import",
      "handshake",
      "ping",
      "tools.list",
      "tools.call",
      "unknown tool",
      "close",
    ]);
    assert.match(report.userAgent, /HeadlessChrome\//);
    assert.equal(report.hasDeno, false);

    assert.match(report.handshake?.sessionId ?? "", /^[0-9a-f]{32}$/);
    assert.deepEqual(report.handshake?.acceptedCaps, ["tools"]);
    assert.ok((report.handshake?.maxParallel ?? 0) >= 1);

    assert.ok(report.ping && report.ping.roundTripMs >= 0);
    assert.ok(report.ping.uptimeSeconds > 0);

    assert.deepEqual(report.tools, ["count"]);

    assert.deepEqual(report.call, {
      events: [1, 2, 3].map((at, seq) => ({
        kind: "progress",
        seq,
        data: { pct: (at / 3) * 100, message: `at ${at}` },
      })),
      success: true,
      data: 3,
      toolName: "count",
    });

    assert.deepEqual(report.unknownTool, {
      isSkillboxError: true,
      name: "SkillboxError",
      code: "unknown_tool",
      message: 'Unknown tool "no_such_tool"',
    });

    assert.equal(report.close?.code, 1000);
  } finally {
    clearTimeout(timer);
    await server.shutdown();
    await host.close({ timeoutSeconds: 1 });
  }
});
