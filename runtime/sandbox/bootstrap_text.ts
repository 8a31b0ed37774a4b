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

let bootstrapSource: Promise<string> | null = null;

/**
 * The worker bootstrap as JavaScript (see {@link buildBootstrap}), made
 * once per host. Workers start it from a `blob:` URL (so they need no read
 * access to skillbox's files); as JavaScript it is not compiled again in
 * every process, and Deno writes no compiled copy of it into its cache: a
 * `blob:` URL is new in every process, so that copy was never read again,
 * and in a confined process (read-only cache) Deno retried the write for
 * 150 ms.
 *
 * @returns JavaScript source
 * @example The worker bootstrap as JavaScript, describe beside it
 * ```ts
 * import { loadBootstrap } from "./bootstrap_text.ts";
 * import assert from "node:assert/strict";
 * const js = await loadBootstrap();
 * assert.match(js, /^const ZOD = /);
 * assert.match(js, /hardening/);
 * assert.doesNotMatch(js, /import type/);
 * ```
 */
export function loadBootstrap(): Promise<string> {
  // A failed read is not kept, or every later start would fail until a
  // restart.
  bootstrapSource ??= readBootstrap().catch((err) => {
    bootstrapSource = null;
    throw err;
  });
  return bootstrapSource;
}

async function readBootstrap(): Promise<string> {
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
