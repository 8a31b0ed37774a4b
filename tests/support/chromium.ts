/**
 * Finds and drives Debian's `chromium` for the browser test: headless, with
 * a fresh profile, no network chatter, and killed (then awaited) on dispose.
 *
 * @module
 */

/**
 * The Chromium executable: `$CHROMIUM` when set, else the first `chromium`
 * or `chromium-browser` on `PATH`; `null` when there is none.
 */
export function findChromium(): string | null {
  const override = Deno.env.get("CHROMIUM");
  if (override) return override;
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    for (const name of ["chromium", "chromium-browser"]) {
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

/**
 * Registers a Deno test that needs Chromium: run with the executable when
 * one is found; a failure when it is missing and `CI` is set (CI must
 * install it); otherwise an ignored test whose name says how to install it.
 *
 * @example
 * ```ts ignore
 * chromiumTest("the page loads", async (executable) => {
 *   await using browser = await launchChromium(executable, "http://127.0.0.1:8000/");
 * });
 * ```
 */
export function chromiumTest(
  name: string,
  fn: (executable: string) => Promise<void>,
): void {
  const chromium = findChromium();
  if (chromium !== null) {
    Deno.test(name, () => fn(chromium));
  } else if (Deno.env.get("CI")) {
    Deno.test(name, () => {
      throw new Error(
        "Chromium is not installed (no chromium or chromium-browser on PATH, " +
          "no $CHROMIUM) and CI is set: CI must install it " +
          "(apt-get install -y chromium; .ci/run does when it is missing)",
      );
    });
  } else {
    Deno.test({
      name: `${name} [IGNORED: chromium is not installed; ` +
        `apt-get install -y chromium to run it]`,
      ignore: true,
      fn() {},
    });
  }
}

/** A running headless Chromium. */
export interface Browser extends AsyncDisposable {
  /** Resolves when the browser exits on its own (or is killed). */
  readonly exited: Promise<Deno.CommandStatus>;
  /** The tail of what the browser wrote to stderr so far. */
  stderr(): string;
}

const STDERR_KEEP = 8_192;

/**
 * Opens `url` in headless Chromium with a fresh temporary profile (also its
 * TMPDIR). Disposing it sends SIGTERM, SIGKILL after `killAfterMs`, awaits
 * the exit and removes the profile, leaving nothing behind in `/tmp`.
 *
 * @example
 * ```ts ignore
 * await using browser = await launchChromium(executable, "http://127.0.0.1:8000/");
 * ```
 */
export async function launchChromium(
  executable: string,
  url: string,
  killAfterMs = 3_000,
): Promise<Browser> {
  const profile = await Deno.makeTempDir({ prefix: "skillbox_chromium_" });
  const child = new Deno.Command(executable, {
    args: [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
      `--user-data-dir=${profile}`,
      url,
    ],
    // Chromium makes its singleton socket folder under TMPDIR and leaves it
    // behind when killed: inside the profile it goes when the profile does.
    env: { TMPDIR: profile },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let tail = "";
  const drained = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      tail = (tail + decoder.decode(chunk, { stream: true })).slice(
        -STDERR_KEEP,
      );
    }
  })().catch(() => {});
  let disposed = false;
  return {
    exited: child.status,
    stderr: () => tail,
    async [Symbol.asyncDispose]() {
      if (disposed) return;
      disposed = true;
      try {
        child.kill("SIGTERM");
      } catch {
        // already exited
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const killed = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch {
            // already exited
          }
          resolve();
        }, killAfterMs);
      });
      await Promise.race([child.status, killed]);
      clearTimeout(timer);
      await child.status;
      await drained;
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}
