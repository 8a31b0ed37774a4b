/**
 * The setup the console's browser tests share: one test per browser under
 * test, each launching its own headless browser (failing under `CI` when
 * the browser is missing, ignored elsewhere, its name saying how to install
 * it); the laptop viewport they look at the console in; and a watcher of
 * the page's problems (console errors, uncaught page errors, failed
 * requests) that must stay empty.
 *
 * @module
 */

import type { Browser, Page } from "puppeteer-core";
import {
  browsersUnderTest,
  type BrowserUnderTest,
  launchBrowser,
} from "./_browsers.ts";

/** A laptop's screen. */
export const VIEWPORT = { width: 1366, height: 768 };

/**
 * Gives `page` the {@link VIEWPORT}. puppeteer 25 sends Firefox
 * `emulation.setScreenOrientationOverride` beside the size, and Firefox ESR
 * 140 (Debian's) does not know that command: the size, sent before it, is
 * awaited on the page instead of the call's answer.
 *
 * @example
 * ```ts ignore
 * await setLaptopViewport(await browser.newPage());
 * ```
 */
export async function setLaptopViewport(page: Page): Promise<void> {
  try {
    await page.setViewport(VIEWPORT);
  } catch (error) {
    if (!String(error).includes("setScreenOrientationOverride")) throw error;
    // The page takes the new size a moment later.
    const { width, height } = VIEWPORT;
    await waitForTrue(
      page,
      `innerWidth === ${width} && innerHeight === ${height}`,
      5_000,
    ).catch(() => {
      throw error;
    });
  }
}

/**
 * Waits until `expression` (awaited when it is a promise) is truthy on the
 * page, reading it every 50 ms, for at most `timeoutMs`. Not puppeteer's
 * `waitForFunction`: it makes a `Function` of a string inside the page,
 * which the console's CSP blocks in Firefox.
 *
 * @example
 * ```ts ignore
 * await waitForTrue(page, `document.getElementById("conn")?.textContent === "live"`, 10_000);
 * ```
 */
export async function waitForTrue(
  page: Page,
  expression: string,
  timeoutMs: number,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!await page.evaluate(expression)) {
    if (Date.now() >= end) {
      throw new Error(`Still false after ${timeoutMs} ms: ${expression}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Registers one test per browser under test; each launches its browser,
 * runs `check` with it, and closes it.
 *
 * @param name the test's name for a browser
 * @param check what the test does with the launched browser
 * @example
 * ```ts ignore
 * testInBrowsers((t) => `the console loads in ${t.name}`, async (browser) => {
 *   const page = await browser.newPage();
 *   await page.close();
 * });
 * ```
 */
export function testInBrowsers(
  name: (target: BrowserUnderTest) => string,
  check: (browser: Browser, target: BrowserUnderTest) => Promise<void>,
): void {
  for (const target of browsersUnderTest()) {
    const title = name(target);
    if (target.executable === null && Deno.env.get("CI")) {
      Deno.test(title, () => {
        throw new Error(
          `${target.name} is not installed and CI is set: CI must install it ` +
            `(${target.install}; .ci/run does when it is missing)`,
        );
      });
    } else if (target.executable === null) {
      Deno.test({
        name: `${title} [IGNORED: ${target.name} is not installed; ` +
          `${target.install} to run it]`,
        ignore: true,
        fn() {},
      });
    } else {
      Deno.test({
        name: title,
        // puppeteer keeps its own sockets and timers until the browser is gone.
        sanitizeOps: false,
        sanitizeResources: false,
        async fn() {
          await using launched = await launchBrowser(target);
          await check(launched.browser, target);
        },
      });
    }
  }
}

/** The problems a page showed, as they happen. */
export interface ProblemWatch {
  /** Each problem, as a line (empty when the page behaved). */
  readonly problems: string[];
  /** Waits (at most `timeoutMs`) for a problem that includes `text`. */
  seen(text: string, timeoutMs: number): Promise<boolean>;
}

/**
 * Watches a page's console errors, uncaught page errors and failed requests
 * (the console's live stream excepted: closing the page cuts it).
 *
 * @param page the page to watch
 * @returns the problems so far, and a bounded wait for one
 * @example
 * ```ts ignore
 * const watch = watchProblems(page);
 * await page.goto(url);
 * assert.deepEqual(watch.problems, []);
 * ```
 */
export function watchProblems(page: Page): ProblemWatch {
  const problems: string[] = [];
  const waiters = new Set<(problem: string) => void>();
  const add = (problem: string) => {
    problems.push(problem);
    for (const waiter of waiters) waiter(problem);
  };
  page.on("console", (m) => {
    if (m.type() === "error") {
      add(`console: ${m.text()} (${m.location().url})`);
    }
  });
  page.on("pageerror", (e) => add(`page: ${(e as Error).message}`));
  page.on("requestfailed", (r) => {
    if (!r.url().includes("/api/live")) add(`request: ${r.url()}`);
  });
  return {
    problems,
    seen(text, timeoutMs) {
      if (problems.some((p) => p.includes(text))) return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (found: boolean) => {
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(found);
        };
        const waiter = (problem: string) => {
          if (problem.includes(text)) done(true);
        };
        const timer = setTimeout(() => done(false), timeoutMs);
        waiters.add(waiter);
      });
    },
  };
}
