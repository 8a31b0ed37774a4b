// The console of one host of a fleet shows the fleet, in headless
// Chromium (Debian's, driven by puppeteer-core): a run in progress on the
// other host is in "Running now" with that host's name (the live view),
// the hosts list says both hosts are alive and counts the run (the
// overview), and a call finished there is in the history. One browser
// only: the dashboard itself is checked in both by tests/console/.
import assert from "node:assert/strict";
import {
  browsersUnderTest,
  keepScreenshot,
  launchBrowser,
} from "../console/_browsers.ts";
import {
  setLaptopViewport,
  waitForTrue,
  watchProblems,
} from "../console/_browser_setup.ts";
import { a2eSession, type FleetHost, fleetTest, TOKEN } from "./_fleet.ts";
import type { Msg } from "../support/wire.ts";

const NAME =
  "the console of one host shows the runs and hosts of the whole fleet";
const chromium = browsersUnderTest().find((b) => b.kind === "chrome")!;

if (chromium.executable === null && Deno.env.get("CI")) {
  Deno.test(NAME, () => {
    throw new Error(
      `Chromium is not installed and CI is set: CI must install it (${chromium.install})`,
    );
  });
} else if (chromium.executable === null) {
  Deno.test({
    name: `${NAME} [IGNORED: Chromium is not installed; ${chromium.install}]`,
    ignore: true,
    fn() {},
  });
} else {
  fleetTest(NAME, async (fleet) => {
    const [h1, h2] = fleet.hosts as [FleetHost, FleetHost];
    await using launched = await launchBrowser(chromium);
    const page = await launched.browser.newPage();
    const session = await a2eSession(h2.url);
    let napping: Promise<Msg> | null = null;
    try {
      await setLaptopViewport(page);
      const watch = watchProblems(page);
      await page.goto(`${h1.url}/login`, {
        waitUntil: "load",
        timeout: 15_000,
      });
      await page.type("#token", TOKEN);
      await Promise.all([
        page.waitForNavigation({ waitUntil: "load", timeout: 15_000 }),
        page.click('button[type="submit"]'),
      ]);
      await page.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
      await waitForTrue(
        page,
        `document.getElementById("conn")?.textContent === "live"`,
        10_000,
      );
      // A call on h2 that finishes at once: in h1's history, named h2.
      const echo = await session.call("echo", { client: "browser" });
      assert.equal(echo.type, "tool/call/resp", JSON.stringify(echo));
      await waitForTrue(
        page,
        `[...document.querySelectorAll("#history-rows tr")].some((tr) => tr.children[2]?.textContent === "echo" && tr.children[6]?.textContent === "h2")`,
        15_000,
      );
      // A call on h2 in progress: running on h1's page, with its host.
      napping = session.call("nap", { ms: 600_000 });
      await waitForTrue(
        page,
        `[...document.querySelectorAll("#running-list li")].some((li) => li.textContent.includes("nap") && li.textContent.includes("host h2"))`,
        15_000,
      );
      // The overview's hosts: both alive, h2 with its run.
      await waitForTrue(
        page,
        `(document.querySelector('#hosts li[data-host="h2"]')?.textContent ?? "").includes("alive") && document.querySelector('#hosts li[data-host="h2"]').textContent.includes("1 running")`,
        15_000,
      );
      const hosts = await page.evaluate(
        `[...document.querySelectorAll("#hosts li")].map((li) => li.textContent)`,
      ) as string[];
      assert.equal(hosts.length, 2, hosts.join("\n"));
      assert.match(hosts[0]!, /^h1 · alive · this host · 0 running$/);
      assert.match(hosts[1]!, /^h2 · alive · seen \d+ s ago · 1 running$/);
      await keepScreenshot(page, "console-fleet.png");
      assert.deepEqual(watch.problems, []);
    } finally {
      await page.close();
      await session.close();
      await napping;
    }
  });
}
