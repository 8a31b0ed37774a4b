/**
 * The files a run kept (a skill script's workspace), as the console shows
 * them: listed with the run (name, size, kept or not, binary or text), and
 * one file's content served on its own, addressed by its place in the run's
 * list, never by its name (a name is whatever an untrusted script chose:
 * `../../x`, `..`, `<script>`; it is only ever shown as text).
 *
 * A file's content is served so that it can never run in the console's
 * origin: `text/plain` (or `application/octet-stream`) with `nosniff`, as an
 * attachment, under a CSP of `default-src 'none'; sandbox` (a browser that
 * opened it anyway would give it an opaque origin and no script).
 *
 * @module
 */

import type { StoredFile } from "../store/store.ts";

/** One kept file in a run's detail. */
export interface RunFileView {
  /** Its place in the run's list: the `<n>` of its content's URL. */
  index: number;
  /** Its path, `<script call>/<path in the workspace>`, as the script named it. */
  name: string;
  /** Its size in bytes when the run ended. */
  size: number;
  /** Whether its content was kept (false: over a cap, or it held a secret). */
  kept: boolean;
  /** Bytes of content kept (0 when not kept). */
  kept_bytes: number;
  /** Whether the content is not UTF-8 text (or holds a NUL byte). */
  binary: boolean;
  /** Why it was not kept, or the count of files not listed, or null. */
  note: string | null;
  /** Where its content is served (relative to `/api/runs/<id>/`), or null. */
  content: string | null;
}

/**
 * The view of a run's kept files.
 *
 * @param files the files as stored
 * @returns their views, in order
 * @example A text file kept, a binary one, one over the cap
 * ```ts
 * import { runFileViews } from "./run_files.ts";
 * import assert from "node:assert/strict";
 * const views = runFileViews([
 *   { name: "1/a.txt", size: 2, data: new TextEncoder().encode("hi"), note: null },
 *   { name: "1/b.bin", size: 2, data: new Uint8Array([0xff, 0]), note: null },
 *   { name: "1/big", size: 9e6, data: null, note: "not kept: over the cap" },
 * ]);
 * assert.deepEqual(views.map((v) => [v.kept, v.binary, v.content]), [
 *   [true, false, "files/0"], [true, true, "files/1"], [false, false, null],
 * ]);
 * ```
 */
export function runFileViews(files: readonly StoredFile[]): RunFileView[] {
  return files.map((file, index) => ({
    index,
    name: file.name,
    size: file.size,
    kept: file.data !== null,
    kept_bytes: file.data?.length ?? 0,
    binary: file.data !== null && isBinary(file.data),
    note: file.note,
    content: file.data === null ? null : `files/${index}`,
  }));
}

/**
 * The response serving one kept file's content, or null when the run has
 * no such file or kept none of it.
 *
 * @param files the run's files as stored
 * @param index the file's place in the list, as given in the URL
 * @returns the response, or null
 * @example A script's `<script>` is served as plain text, never as a page
 * ```ts
 * import { fileResponse } from "./run_files.ts";
 * import assert from "node:assert/strict";
 * const data = new TextEncoder().encode("<script>alert(1)</script>");
 * const res = fileResponse([{ name: "1/x.html", size: data.length, data, note: null }], "0")!;
 * assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
 * assert.match(res.headers.get("content-security-policy")!, /sandbox/);
 * assert.match(res.headers.get("content-disposition")!, /^attachment;/);
 * assert.equal(await res.text(), "<script>alert(1)</script>");
 * assert.equal(fileResponse([], "0"), null);
 * ```
 */
export function fileResponse(
  files: readonly StoredFile[],
  index: string,
): Response | null {
  if (!/^(0|[1-9][0-9]{0,8})$/.test(index)) return null;
  const file = files[Number(index)];
  if (!file || file.data === null) return null;
  const data = file.data;
  return new Response(data.slice().buffer, {
    headers: {
      "Content-Type": isBinary(data)
        ? "application/octet-stream"
        : "text/plain; charset=utf-8",
      "Content-Length": String(data.length),
      "Content-Disposition": contentDisposition(file.name),
      "Content-Security-Policy": "default-src 'none'; sandbox",
      "X-Content-Type-Options": "nosniff",
      "Cross-Origin-Resource-Policy": "same-origin",
      "X-Frame-Options": "DENY",
      "Cache-Control": "no-store",
    },
  });
}

/**
 * `attachment` with a safe file name: the last part of `name`, reduced to
 * `[A-Za-z0-9._-]` (no quote, no separator, no control character can reach
 * the header), and the exact name percent-encoded in `filename*`.
 *
 * @param name the name the script gave
 * @returns the header's value
 * @example
 * ```ts
 * import { contentDisposition } from "./run_files.ts";
 * import assert from "node:assert/strict";
 * assert.equal(contentDisposition('1/../../a "b".txt'),
 *   `attachment; filename="a__b_.txt"; filename*=UTF-8''a%20%22b%22.txt`);
 * assert.equal(contentDisposition("1/.."), `attachment; filename="file"; filename*=UTF-8''..`);
 * ```
 */
export function contentDisposition(name: string): string {
  const base = name.split("/").pop() ?? "";
  let ascii = base.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 100);
  if (/^[._]*$/.test(ascii)) ascii = "file";
  const exact = encodeURIComponent(base.slice(0, 200)).replace(
    /['()*]/g,
    (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase(),
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

// Not UTF-8, or holding a NUL byte.
function isBinary(data: Uint8Array): boolean {
  if (data.includes(0)) return true;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(data);
    return false;
  } catch {
    return true;
  }
}
