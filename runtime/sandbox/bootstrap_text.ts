/**
 * The worker bootstrap as one self-contained text. `sandbox/worker/
 * bootstrap.ts` reaches workers from a `blob:` URL, where it can import
 * nothing; its one run-time import, the `describe` of `protocol/
 * describe.ts` (shared with the host's static discovery path), is inlined
 * here in place of the import, so `describe` has one source. The host only
 * reads these files as text and ships them into the sandbox; it never
 * imports `sandbox/` (tests/layout_test.ts).
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

/** The bootstrap's import of the shared `describe`, as written in it. */
const DESCRIBE_IMPORT =
  /^import \{[\w\s,]*\} from "\.\.\/\.\.\/protocol\/describe\.ts";$/m;

/**
 * Builds the bootstrap's JavaScript from its TypeScript and `describe.ts`'s:
 * types stripped (both use only erasable syntax), and the import of
 * `../../protocol/describe.ts` replaced by that module's code without its `export`
 * keywords.
 *
 * @param bootstrap the text of `bootstrap.ts`
 * @param describe the text of `describe.ts`
 * @returns JavaScript that imports nothing
 * @throws {Error} when the bootstrap does not import `describe.ts` as one
 *   line, or either text keeps another run-time import or `describe.ts`
 *   exports anything but functions
 * @example The one import inlined, the types stripped
 * ```ts
 * import { buildBootstrap } from "./bootstrap_text.ts";
 * import assert from "node:assert/strict";
 * const js = buildBootstrap(
 *   'import { twice } from "../../protocol/describe.ts";\npostMessage(twice(2));',
 *   "export function twice(n: number): number { return 2 * n; }",
 * );
 * assert.equal(new Function("postMessage", js + "\n;return 0")(() => {}), 0);
 * assert.doesNotMatch(js, /\bimport\b|\bexport\b/);
 * ```
 */
export function buildBootstrap(bootstrap: string, describe: string): string {
  const boot = stripTypeScriptTypes(bootstrap, { mode: "strip" });
  const shared = stripTypeScriptTypes(describe, { mode: "strip" })
    .replace(/^export (?=function )/gm, "");
  if (!DESCRIBE_IMPORT.test(boot)) {
    throw new Error(
      'The worker bootstrap must import "../../protocol/describe.ts"',
    );
  }
  // The bootstrap declares `ZOD`; its value is defined here.
  const js = `const ZOD = ${JSON.stringify(WORKER_ZOD)};\n` +
    boot.replace(DESCRIBE_IMPORT, () => shared);
  // A statement, not a property named so (`export: name,`).
  if (/^\s*(import|export)\b(?!\s*:)/m.test(js)) {
    throw new Error(
      "The worker bootstrap must import nothing at run time but describe.ts",
    );
  }
  return js;
}

/**
 * Reads and builds the bootstrap (see {@link buildBootstrap}).
 *
 * @returns JavaScript source
 * @example The worker bootstrap with describe inlined
 * ```ts
 * import { readBootstrap } from "./bootstrap_text.ts";
 * import assert from "node:assert/strict";
 * assert.match(await readBootstrap(), /function describeExports/);
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
