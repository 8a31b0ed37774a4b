/**
 * The console in a real browser: headless Chromium driven by
 * `puppeteer-core` (Debian's chromium, never a downloaded one) against a real
 * listening host serving skillbox's shipped skills plus fixtures, with the
 * LLM pointed at a mock provider that streams tokens slowly. The page must
 * load without console errors, list the shipped toolkits and skills, show a
 * live skill run's progress bar move and its tokens appear, then the finished
 * run in the history with its events. A screenshot is saved under a
 * temporary folder and checked not to be blank.
 *
 * Without Chromium the test is ignored (its name says so), except under `CI`.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import puppeteer, { type Page } from "puppeteer-core";
import { findChromium } from "../browser/_chromium.ts";
import { startMockOpenAI } from "../support/mock_openai.ts";
import { fixtureHost } from "./_host.ts";

const NAME = "the console works in headless Chromium against a real host";
const chromium = findChromium();
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

if (chromium === null && Deno.env.get("CI")) {
  Deno.test(NAME, () => {
    throw new Error(
      "Chromium is not installed and CI is set: CI must install it",
    );
  });
} else if (chromium === null) {
  Deno.test({
    name: `${NAME} [IGNORED: chromium is not installed]`,
    ignore: true,
    fn() {},
  });
} else {
  Deno.test({
    name: NAME,
    // puppeteer keeps its own sockets and timers until the browser is gone.
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
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
      const browser = await puppeteer.launch({
        executablePath: chromium,
        headless: true,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--disable-dev-shm-usage",
        ],
      });
      try {
        const page = await browser.newPage();
        await page.setViewport({ width: 1280, height: 900 });
        const problems: string[] = [];
        page.on("console", (m) => {
          if (m.type() === "error") {
            problems.push(`console: ${m.text()} (${m.location().url})`);
          }
        });
        page.on(
          "pageerror",
          (e) => problems.push(`page: ${(e as Error).message}`),
        );
        page.on("requestfailed", (r) => {
          if (!r.url().includes("/api/live")) {
            problems.push(`request: ${r.url()}`);
          }
        });

        await page.goto(`${url}/`, { waitUntil: "load", timeout: 15_000 });
        await page.waitForSelector("body[data-ready=true]", {
          timeout: 15_000,
        });
        await page.waitForFunction(
          `document.getElementById("conn")?.textContent === "live"`,
          { timeout: 10_000 },
        );

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
        await page.waitForFunction(
          `(document.querySelector("#running-list .tokens")?.textContent ?? "").includes("tokens from")`,
          { timeout: 15_000 },
        );
        const result = await run;
        assert.equal(result.success, true, JSON.stringify(result));

        // The finished run is in the history; opening it shows its events.
        await page.waitForSelector(
          "#history-rows tr[data-run] td:nth-child(3)",
          { timeout: 10_000 },
        );
        await page.waitForFunction(
          `[...document.querySelectorAll("#history-rows tr")].some((tr) => tr.children[2]?.textContent === "steps")`,
          { timeout: 10_000 },
        );
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
          await page.evaluate(
            `document.getElementById("running-empty").hidden`,
          ),
          false,
        );

        const shot = join(shots, "console.png");
        await page.screenshot({ path: shot, fullPage: true });
        const blankPage = await browser.newPage();
        await blankPage.setViewport({ width: 1280, height: 900 });
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
        assert.deepEqual(problems, []);
      } finally {
        await browser.close();
        await Deno.remove(shots, { recursive: true }).catch(() => {});
      }
    },
  });
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
    await page.waitForFunction(
      `(() => { const bar = document.querySelector("#running-list progress"); return !bar || bar.value !== ${
        value ?? -1
      }; })()`,
      { timeout: 5_000 },
    ).catch(() => {});
  }
  return seen;
}
