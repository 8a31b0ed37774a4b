/**
 * The files a run kept, on the console's run page, in headless Chromium and
 * Firefox (as `console_browser_test.ts` drives them): opening a run lists its
 * files with their names, sizes and what was kept, as text (a name that is
 * markup stays text), and a kept file that is a page with scripts opens as
 * text in the console without running anything; a file not kept or binary
 * offers no view. Without a browser the test is ignored, except under `CI`
 * (`_browser_setup.ts`).
 *
 * @module
 */

import assert from "node:assert/strict";
import type { Browser } from "puppeteer-core";
import { fixtureHost } from "../support/console_host.ts";
import { PAGE, writeHostileRuns } from "./_hostile_files.ts";
import {
  setLaptopViewport,
  testInBrowsers,
  waitForTrue,
  watchProblems,
} from "./_browser_setup.ts";

testInBrowsers(
  (target) => `the run page lists and shows kept files in ${target.name}`,
  checkFiles,
);

testInBrowsers(
  (target) =>
    `viewing a kept file once signed out goes to the sign-in form in ${target.name}`,
  checkSignedOutView,
);

async function checkFiles(browser: Browser): Promise<void> {
  await using t = await fixtureHost();
  writeHostileRuns(t.dbPath);
  const { url } = await t.host.listen({ hostname: "127.0.0.1", port: 0 });
  const page = await browser.newPage();
  const watch = watchProblems(page);
  try {
    await setLaptopViewport(page);
    await page.goto(`${url}/`, { waitUntil: "load", timeout: 15_000 });
    await page.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
    await page.click('#history-rows tr[data-run="run-a"]');
    await page.waitForSelector("#detail ul.files li", { timeout: 10_000 });
    const items = await page.evaluate(
      `[...document.querySelectorAll("#detail ul.files li")].map((li) => [
        li.querySelector(".name").textContent, li.querySelector(".muted").textContent,
        !!li.querySelector("button.view"), !!li.querySelector("a[download]")])`,
    ) as [string, string, boolean, boolean][];
    assert.deepEqual(items, [
      ["1/../../x", "6 B · text", true, true],
      ["1/..", "3 B · text", true, true],
      ["1/page.html", `${PAGE.length} B · text`, true, true],
      [
        "1/huge.txt",
        `${5 << 20} B · not kept: over the 1048576-byte cap of a run's files`,
        false,
        false,
      ],
      [
        '1/<img src=x onerror="parent.pwned=3">.bin',
        "3 B · binary",
        false,
        true,
      ],
    ]);
    // The markup in a name stayed text: no element was made from it.
    assert.equal(
      await page.evaluate(`document.querySelector("#detail img")`),
      null,
    );

    await page.click('#detail li[data-file="2"] button.view');
    await waitForTrue(
      page,
      `document.querySelector("#detail .file-view")?.dataset.file === "2"`,
      10_000,
    );
    assert.equal(
      await page.evaluate(
        `document.querySelector("#detail .file-view").textContent`,
      ),
      PAGE,
    );
    await page.click('#detail li[data-file="0"] button.view');
    await waitForTrue(
      page,
      `document.querySelector("#detail .file-view")?.dataset.file === "0"`,
      10_000,
    );
    assert.equal(
      await page.evaluate(
        `document.querySelector("#detail .file-view").textContent`,
      ),
      "climb\n",
    );
    // Nothing of the page ran, nothing of it became an element.
    assert.deepEqual(
      await page.evaluate(
        `[window.pwned ?? null, document.querySelectorAll("#detail script, #detail img, #detail iframe").length]`,
      ),
      [null, 0],
    );
    assert.deepEqual(watch.problems, []);
  } finally {
    await page.close();
  }
}

// A console session that ended while its page stayed open (signed out in
// another tab, or expired): "view" sends the browser to the sign-in form,
// as every other request of the page does, instead of failing unseen. Only
// the file's request is answered 401 here, so that nothing else the page
// asks for (its live feed, its polls) can be what sends it there.
async function checkSignedOutView(browser: Browser): Promise<void> {
  const token = "browser-view-token";
  await using t = await fixtureHost({ tokens: [token], adminTokens: [token] });
  writeHostileRuns(t.dbPath);
  const { url } = await t.host.listen({ hostname: "127.0.0.1", port: 0 });
  const page = await browser.newPage();
  try {
    await setLaptopViewport(page);
    await page.goto(`${url}/login`, { waitUntil: "load", timeout: 15_000 });
    await page.type("#token", token);
    await Promise.all([
      page.waitForNavigation({ waitUntil: "load", timeout: 15_000 }),
      page.click('button[type="submit"]'),
    ]);
    await page.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
    await page.click('#history-rows tr[data-run="run-a"]');
    await page.waitForSelector('#detail li[data-file="2"] button.view', {
      timeout: 10_000,
    });
    await page.setRequestInterception(true);
    page.on("request", (request) => {
      if (request.isInterceptResolutionHandled()) return;
      if (new URL(request.url()).pathname.startsWith("/api/runs/run-a/")) {
        return void request.respond({ status: 401, body: "" });
      }
      void request.continue();
    });
    await Promise.all([
      page.waitForNavigation({ waitUntil: "load", timeout: 15_000 }),
      page.click('#detail li[data-file="2"] button.view'),
    ]);
    assert.equal(new URL(page.url()).pathname, "/login");
  } finally {
    await page.close();
  }
}
