/**
 * The console in real browsers: headless Chromium (over CDP) and headless
 * Firefox (over WebDriver BiDi), both driven by `puppeteer-core` (Debian's
 * chromium and firefox-esr, never downloaded ones) against a real listening
 * host serving skillbox's shipped skills plus fixtures, with the LLM pointed
 * at a mock provider that streams tokens slowly. In each browser, at laptop
 * size (1366x768), the page must load without console errors, not overflow
 * sideways, list the shipped toolkits and skills, show a live skill run's
 * progress bar move and its tokens appear, then the finished run in the
 * history with its events. A screenshot is saved under a temporary folder
 * and checked not to be blank (`SKILLBOX_KEEP_SHOTS=<dir>` keeps a copy).
 * Then, against a host with a token, the login form signs the browser in.
 *
 * Without a browser its test is ignored (its name says so), except under
 * `CI`, where it fails: CI must install it (`.ci/run` does).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { startMockOpenAI } from "../support/mock_openai.ts";
import { fixtureHost } from "../support/console_host.ts";
import { keepScreenshot } from "./_browsers.ts";
import {
  setLaptopViewport,
  testInBrowsers,
  waitForTrue,
  watchProblems,
} from "./_browser_setup.ts";

const TOKENS = [
  "Live ",
  "tokens ",
  "from ",
  "the ",
  "mock ",
  "model ",
  "arrive ",
  "one ",
  "by ",
  "one.",
];

testInBrowsers(
  (target) =>
    `the console works in headless ${target.name} against a real host`,
  async (browser, target) => {
    await checkDashboard(browser, target.kind);
    await checkLogin(browser);
    await checkHistoryBound(browser);
    await checkChildrenPaged(browser);
  },
);

// One browser against one open host: the checks of the module doc.
async function checkDashboard(browser: Browser, kind: string): Promise<void> {
  await using mock = startMockOpenAI([{
    tokens: TOKENS,
    token_interval_ms: 150,
  }]);
  await using t = await fixtureHost({
    builtin: true,
    llm: [{
      provider_name: "openai",
      provider_credentials: { api_key: "browser-test-key" },
      provider_config: { base_url: mock.url, model: "mock-model" },
      is_default: true,
    }],
  });
  const { url } = await t.host.listen({ hostname: "127.0.0.1", port: 0 });
  const shots = await Deno.makeTempDir({
    prefix: "skillbox_console_shots_",
  });
  const page = await browser.newPage();
  try {
    await setLaptopViewport(page);
    const watch = watchProblems(page);
    // The watcher itself sees a console error in this browser (over CDP or
    // BiDi alike), or an empty list below would prove nothing.
    await page.evaluate(`console.error("skillbox watcher probe")`);
    assert.ok(
      await watch.seen("skillbox watcher probe", 5_000),
      `console errors are seen: ${watch.problems}`,
    );
    watch.problems.length = 0;

    await page.goto(`${url}/`, { waitUntil: "load", timeout: 15_000 });
    await untilLive(page);

    // The shipped toolkits and skills are listed.
    const kits = await page.evaluate(
      `[...document.querySelectorAll("#tools h4")].map((h) => h.textContent)`,
    ) as string[];
    for (const kit of ["code", "filesystem", "http", "shell"]) {
      assert.ok(kits.includes(kit), `toolkit ${kit} in ${kits}`);
    }
    for (const skill of ["csv_profile", "explain_file", "steps"]) {
      assert.ok(
        await page.$(`#skills [data-skill="${skill}"]`),
        `skill ${skill}`,
      );
    }
    assert.ok(await page.$('#tools [data-tool="read_file"]'));

    // A live run: its progress bar moves and its tokens appear.
    const run = t.host.callSkill("steps", { pause_ms: 400 });
    const seen = await progressValues(page);
    assert.ok(
      seen.length >= 2 && seen.at(-1)! > seen[0]!,
      `progress moved: ${seen}`,
    );
    await waitForTrue(
      page,
      `(document.querySelector("#running-list .tokens")?.textContent ?? "").includes("tokens from")`,
      15_000,
    );
    await keepScreenshot(page, `console-${kind}-live.png`);
    const result = await run;
    assert.equal(result.success, true, JSON.stringify(result));

    // The finished run is in the history; opening it shows its events.
    await waitForTrue(
      page,
      `[...document.querySelectorAll("#history-rows tr")].some((tr) => tr.children[2]?.textContent === "steps")`,
      10_000,
    );
    // Each row names the host that ran it: a fleet's console shows them all.
    const host = await page.evaluate(
      `[...document.querySelectorAll("#history-rows tr")].find((tr) => tr.children[2]?.textContent === "steps").children[6]?.textContent ?? ""`,
    ) as string;
    assert.match(host, /.+:\d+$/, `host cell "${host}"`);
    await page.evaluate(
      `[...document.querySelectorAll("#history-rows tr")].find((tr) => tr.children[2]?.textContent === "steps").click()`,
    );
    await page.waitForSelector(
      '#detail ol.events li[data-kind="skill.completed"]',
      { timeout: 10_000 },
    );
    const kinds = await page.evaluate(
      `[...document.querySelectorAll("#detail ol.events li")].map((li) => li.getAttribute("data-kind"))`,
    ) as string[];
    assert.ok(
      kinds.includes("llm.token") && kinds.includes("progress"),
      kinds.join(","),
    );
    assert.equal(
      await page.evaluate(`document.getElementById("running-empty").hidden`),
      false,
    );

    // The per-tool latency chart draws a line, even from one call.
    await waitForTrue(
      page,
      `(document.querySelector('#stats-rows [data-stat="add"] polyline')?.getAttribute("points") ?? "").includes(" ")`,
      10_000,
    );

    // At laptop width nothing pushes the page sideways.
    const widths = await page.evaluate(
      `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`,
    ) as [number, number];
    assert.ok(
      widths[0] <= widths[1],
      `page ${widths[0]}px wide in ${widths[1]}px`,
    );

    await screenshotNotBlank(browser, page, shots, kind);
    assert.deepEqual(watch.problems, []);
  } finally {
    // Closing the page ends its live stream before the host closes.
    await page.close();
    await Deno.remove(shots, { recursive: true }).catch(() => {});
  }
}

// A host with a token: a signed-out browser lands on the login form, and
// signing in there (a same-origin form POST) opens the live dashboard with an
// HttpOnly session cookie the page's script cannot read.
async function checkLogin(browser: Browser): Promise<void> {
  const token = "browser-login-token";
  await using t = await fixtureHost({ tokens: [token] });
  const { url } = await t.host.listen({ hostname: "127.0.0.1", port: 0 });
  const page = await browser.newPage();
  try {
    await setLaptopViewport(page);
    const watch = watchProblems(page);
    await page.goto(`${url}/`, { waitUntil: "load", timeout: 15_000 });
    assert.equal(new URL(page.url()).pathname, "/login");
    await page.type("#token", token);
    await Promise.all([
      page.waitForNavigation({ waitUntil: "load", timeout: 15_000 }),
      page.click('button[type="submit"]'),
    ]);
    const text = await page.evaluate(`document.body.innerText`) as string;
    assert.equal(new URL(page.url()).pathname, "/", text.slice(0, 200));
    await untilLive(page);
    assert.equal(await page.evaluate(`document.cookie`), "");
    assert.deepEqual(watch.problems, []);
  } finally {
    await page.close();
  }
}

// The page's full screenshot must be much bigger than a blank page's.
async function screenshotNotBlank(
  browser: Browser,
  page: Page,
  shots: string,
  kind: string,
): Promise<void> {
  const shot = join(shots, "console.png");
  await page.screenshot({ path: shot, fullPage: true });
  await keepScreenshot(page, `console-${kind}.png`, true);
  const blankPage = await browser.newPage();
  await setLaptopViewport(blankPage);
  const blank = join(shots, "blank.png");
  await blankPage.screenshot({ path: blank });
  const [size, blankSize] = [
    (await Deno.stat(shot)).size,
    (await Deno.stat(blank)).size,
  ];
  assert.ok(
    size > 20_000 && size > blankSize * 4,
    `screenshot ${size} bytes vs blank ${blankSize}`,
  );
}

// Samples the running skill's progress bar until it reaches 80.
async function progressValues(page: Page): Promise<number[]> {
  const seen: number[] = [];
  const end = Date.now() + 15_000;
  while (Date.now() < end) {
    const value = await page.evaluate(
      `(() => { const bar = document.querySelector("#running-list progress"); return bar && bar.hasAttribute("value") ? bar.value : null; })()`,
    ) as number | null;
    if (value !== null && value !== seen.at(-1)) seen.push(value);
    if ((value ?? 0) >= 80) return seen;
    await waitForTrue(
      page,
      `(() => { const bar = document.querySelector("#running-list progress"); return !bar || bar.value !== ${
        value ?? -1
      }; })()`,
      5_000,
    ).catch(() => {});
  }
  return seen;
}

// A tab left open on a busy host: live runs go on top of the history, which
// keeps one page of rows (the API's 50) instead of growing without end, and
// "Older…" brings back the rows pushed out, each once, in order.
async function checkHistoryBound(browser: Browser): Promise<void> {
  await using t = await fixtureHost();
  const { url } = await t.host.listen({ hostname: "127.0.0.1", port: 0 });
  const page = await browser.newPage();
  try {
    await setLaptopViewport(page);
    const watch = watchProblems(page);
    await page.goto(`${url}/`, { waitUntil: "load", timeout: 15_000 });
    await untilLive(page);
    const calls = 60;
    for (let i = 0; i < calls; i++) {
      assert.equal((await t.host.callTool("echo", { i })).success, true);
    }
    // The table shows exactly the 50 newest runs the store holds, newest
    // first, once every run is stored and every live row has arrived.
    const rowIds =
      `[...document.querySelectorAll("#history-rows tr")].map((tr) => tr.dataset.run)`;
    await waitForTrue(
      page,
      `fetch("/api/runs?limit=100").then((r) => r.json()).then((body) =>
        body.runs.length === ${calls} &&
        JSON.stringify(${rowIds}) === JSON.stringify(body.runs.slice(0, 50).map((r) => r.id)))`,
      15_000,
    );
    assert.equal(
      await page.evaluate(`document.getElementById("more").hidden`),
      false,
    );
    const stored = await page.evaluate(
      `fetch("/api/runs?limit=100").then((r) => r.json()).then((body) => body.runs.map((r) => r.id))`,
    ) as string[];
    // "Older…" until it hides: every run, once, in the store's order.
    for (let click = 0; click < 5; click++) {
      if (await page.evaluate(`document.getElementById("more").hidden`)) break;
      await page.click("#more");
      await waitForTrue(
        page,
        `document.querySelectorAll("#history-rows tr").length > 50 || document.getElementById("more").hidden`,
        10_000,
      );
    }
    assert.deepEqual(await page.evaluate(rowIds), stored);
    assert.deepEqual(watch.problems, []);
  } finally {
    await page.close();
  }
}

// A run with more children than one answer carries shows the first page,
// says how many there are, and loads the rest on "more tool calls".
async function checkChildrenPaged(browser: Browser): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_console_" });
  try {
    await Deno.mkdir(join(dir, "skills"));
    await Deno.writeTextFile(
      join(dir, "skills", "many_adds.ts"),
      `export default { kind: "skill", name: "many_adds", description: "Adds 150 times",
  tools: ["add"], timeout_seconds: 60, input: { type: "object" },
  async run(_args, ctx) {
    for (let i = 0; i < 150; i++) await ctx.tools.call("add", { a: i, b: 1 });
    return { done: true };
  } };`,
    );
    await using t = await fixtureHost({ dir });
    const result = await t.host.callSkill("many_adds", {});
    assert.equal(result.success, true, JSON.stringify(result));
    const { url } = await t.host.listen({ hostname: "127.0.0.1", port: 0 });
    const page = await browser.newPage();
    try {
      await setLaptopViewport(page);
      const watch = watchProblems(page);
      await page.goto(`${url}/`, { waitUntil: "load", timeout: 15_000 });
      await untilLive(page);
      const row =
        `[...document.querySelectorAll("#history-rows tr")].find((tr) => tr.children[2]?.textContent === "many_adds")`;
      await waitForTrue(page, `${row} !== undefined`, 10_000);
      await page.evaluate(`${row}.click()`);
      const items =
        `document.querySelectorAll("#detail ul.children li").length`;
      await waitForTrue(page, `${items} === 100`, 10_000);
      assert.match(
        await page.evaluate(
          `document.querySelector("#detail h4 .muted")?.textContent ?? ""`,
        ) as string,
        /\(100 of 150\)/,
      );
      await page.click("#detail .more-children");
      await waitForTrue(page, `${items} === 150`, 10_000);
      assert.equal(
        await page.evaluate(
          `document.querySelector("#detail .more-children").hidden`,
        ),
        true,
      );
      const ids = await page.evaluate(
        `[...document.querySelectorAll("#detail ul.children li")].map((li) => li.dataset.child)`,
      ) as string[];
      assert.equal(new Set(ids).size, 150, "each child once");
      assert.deepEqual(watch.problems, []);
    } finally {
      await page.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

// The page has loaded its data and follows the host's live stream.
async function untilLive(page: Page): Promise<void> {
  await page.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
  await waitForTrue(
    page,
    `document.getElementById("conn")?.textContent === "live"`,
    10_000,
  );
}
