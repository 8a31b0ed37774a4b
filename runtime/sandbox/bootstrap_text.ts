/**
 * The worker bootstrap as one self-contained text. `sandbox/worker/
 * bootstrap.ts` reaches workers from a `blob:` URL, where it can import no
 * file; what it shares with the host, the `describe` of `protocol/
 * describe.ts` (also the host's static discovery path), travels with it as
 * a `data:` URL module, so `describe` has one source. The host only reads
 * these files as text and ships them into the sandbox; it never imports
 * `sandbox/` (tests/layout_test.ts).
 *
 * @module
 */

import { stripTypeScriptTypes } from "node:module";
import project from "../../deno.json" with { type: "json" };

/**
 * The zod the worker loads to describe zod schemas: the project's own pin
 * (`deno.json`), so sandbox and host never disagree on its version.
 *
 * @example
 * ```ts
 * import { WORKER_ZOD } from "./bootstrap_text.ts";
 * import assert from "node:assert/strict";
 * assert.match(WORKER_ZOD, /^npm:zod@\d/);
 * ```
 */
export const WORKER_ZOD: string = project.imports.zod;

/**
 * Builds the bootstrap's JavaScript from its TypeScript and `describe.ts`'s:
 * types stripped (both use only erasable syntax), after two constants the
 * bootstrap declares: `ZOD`, the zod it loads ({@link WORKER_ZOD}), and
 * `DESCRIBE`, `describe.ts` as a `data:` URL module it imports on first
 * use. Nothing is cut out of either text: a run-time import the bootstrap
 * should not have fails its worker's start, in the tests.
 *
 * @param bootstrap the text of `bootstrap.ts`
 * @param describe the text of `describe.ts`
 * @returns JavaScript that reads no file
 * @example describe.ts as a module of its own
 * ```ts
 * import { buildBootstrap } from "./bootstrap_text.ts";
 * import assert from "node:assert/strict";
 * const js = buildBootstrap(
 *   "declare const DESCRIBE: string;\nexport const twice = import(DESCRIBE);",
 *   "export function twice(n: number): number { return 2 * n; }",
 * );
 * const url = `data:text/javascript,${encodeURIComponent(js)}`;
 * const shared = await (await import(url)).twice;
 * assert.equal(shared.twice(2), 4);
 * ```
 */
export function buildBootstrap(bootstrap: string, describe: string): string {
  const shared = "data:text/javascript," +
    encodeURIComponent(stripTypeScriptTypes(describe, { mode: "strip" }));
  return `const ZOD = ${JSON.stringify(WORKER_ZOD)};\n` +
    `const DESCRIBE = ${JSON.stringify(shared)};\n` +
    stripTypeScriptTypes(bootstrap, { mode: "strip" });
}

/**
 * Reads and builds the bootstrap (see {@link buildBootstrap}).
 *
 * @returns JavaScript source
 * @example The worker bootstrap with describe beside it
 * ```ts
 * import { readBootstrap } from "./bootstrap_text.ts";
 * import assert from "node:assert/strict";
 * assert.match(await readBootstrap(), /^const ZOD = /);
 * ```
 */
export async function readBootstrap(): Promise<string> {
  const read = (path: string) => {
    const url = new URL(path, import.meta.url);
    return url.protocol === "file:"
      ? Deno.readTextFile(url)
      : fetch(url).then((r) => r.text());
  };
  const [bootstrap, describe] = await Promise.all([
    read("../../sandbox/worker/bootstrap.ts"),
    read("../../protocol/describe.ts"),
  ]);
  return buildBootstrap(bootstrap, describe);
}
