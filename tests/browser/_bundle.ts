/**
 * Bundles a module for the browser with `deno bundle --platform browser`,
 * offline: no remote modules, no npm, no lockfile writes.
 *
 * @module
 */

/**
 * Bundles `entry` (a file URL) into one ES module and returns its source.
 *
 * @example
 * ```ts ignore
 * const js = await bundleForBrowser(new URL("../../client/mod.ts", import.meta.url));
 * ```
 */
export async function bundleForBrowser(entry: URL): Promise<string> {
  const outDir = await Deno.makeTempDir({ prefix: "skillbox_bundle_" });
  try {
    const output = `${outDir}/bundle.js`;
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--platform=browser",
        "--format=esm",
        "--no-lock",
        "--no-remote",
        "--no-npm",
        "--output",
        output,
        decodeURIComponent(entry.pathname),
      ],
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (code !== 0) {
      throw new Error(
        `deno bundle ${
          decodeURIComponent(entry.pathname)
        } exited with ${code}:\n${new TextDecoder().decode(stderr)}`,
      );
    }
    return await Deno.readTextFile(output);
  } finally {
    await Deno.remove(outDir, { recursive: true });
  }
}
