/**
 * The browsers the console's browser test drives through `puppeteer-core`:
 * Debian's `chromium` (over CDP) and `firefox-esr` (over WebDriver BiDi),
 * both installed by the system, never downloaded. Each launch gets its own
 * temporary profile folder, which is also the browser's `TMPDIR` (Chromium
 * puts its singleton socket folder there) and cache home; disposing the
 * launch closes the browser and removes that folder, so a run leaves nothing
 * in `/tmp` or `~/.cache`.
 *
 * @module
 */

import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { findChromium } from "../support/chromium.ts";

/** A browser the console test runs in. */
export interface BrowserUnderTest {
  /** Shown in the test's name: `Chromium` or `Firefox`. */
  readonly name: "Chromium" | "Firefox";
  /** puppeteer's name for it. */
  readonly kind: "chrome" | "firefox";
  /** The executable, or `null` when it is not installed. */
  readonly executable: string | null;
  /** How to install it, for the message when it is missing. */
  readonly install: string;
}

/** The first executable named `names` on `PATH`, else `null`. */
function onPath(names: readonly string[]): string | null {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    for (const name of names) {
      try {
        const info = Deno.statSync(`${dir}/${name}`);
        if (info.isFile && (info.mode ?? 0o111) & 0o111) {
          return `${dir}/${name}`;
        }
      } catch {
        // not here
      }
    }
  }
  return null;
}

/** Firefox: `$FIREFOX` when set, else `firefox-esr` or `firefox` on PATH. */
export function findFirefox(): string | null {
  return Deno.env.get("FIREFOX") || onPath(["firefox-esr", "firefox"]);
}

/** Chromium and Firefox, each with its executable when installed. */
export function browsersUnderTest(): BrowserUnderTest[] {
  return [
    {
      name: "Chromium",
      kind: "chrome",
      executable: findChromium(),
      install: "apt-get install -y chromium, or set $CHROMIUM",
    },
    {
      name: "Firefox",
      kind: "firefox",
      executable: findFirefox(),
      install: "apt-get install -y firefox-esr, or set $FIREFOX",
    },
  ];
}

/** A launched browser; disposing it closes it and removes its profile. */
export interface LaunchedBrowser extends AsyncDisposable {
  readonly browser: Browser;
  /** The temporary profile folder (also the browser's TMPDIR). */
  readonly profile: string;
}

const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/**
 * Launches `target` headless with a fresh profile of its own.
 *
 * @example Launch Firefox and open a page
 * ```ts ignore
 * await using launched = await launchBrowser(browsersUnderTest()[1]!);
 * const page = await launched.browser.newPage();
 * ```
 */
export async function launchBrowser(
  target: BrowserUnderTest,
): Promise<LaunchedBrowser> {
  if (target.executable === null) {
    throw new Error(`${target.name} is not installed: ${target.install}`);
  }
  const profile = await Deno.makeTempDir({
    prefix: `skillbox_${target.kind}_profile_`,
  });
  const remove = () =>
    Deno.remove(profile, { recursive: true }).catch(() => {});
  let browser: Browser;
  try {
    browser = await puppeteer.launch({
      browser: target.kind,
      executablePath: target.executable,
      headless: true,
      userDataDir: profile,
      // Firefox would make an empty cache folder under ~/.cache otherwise.
      env: { ...Deno.env.toObject(), TMPDIR: profile, XDG_CACHE_HOME: profile },
      args: target.kind === "chrome" ? CHROMIUM_ARGS : [],
      timeout: 30_000,
    });
  } catch (error) {
    await remove();
    throw error;
  }
  let disposed = false;
  return {
    browser,
    profile,
    async [Symbol.asyncDispose]() {
      if (disposed) return;
      disposed = true;
      try {
        await browser.close();
      } finally {
        await remove();
      }
    },
  };
}

/**
 * Saves a screenshot of `page` as `name` in `$SKILLBOX_KEEP_SHOTS` when that
 * is set (for a person to look at the page the test saw); else does nothing.
 *
 * @example Keep what the live run looked like
 * ```ts ignore
 * await keepScreenshot(page, "console-firefox-live.png");
 * ```
 */
export async function keepScreenshot(
  page: Page,
  name: string,
  fullPage = false,
): Promise<void> {
  const dir = Deno.env.get("SKILLBOX_KEEP_SHOTS");
  if (!dir) return;
  await Deno.mkdir(dir, { recursive: true });
  await page.screenshot({ path: join(dir, name) as `${string}.png`, fullPage });
}
