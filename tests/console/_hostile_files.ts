/**
 * Runs with hostile kept files, written into a host's store file through the
 * store's interface (as the recorder writes a skill run), the files passed
 * through the recorder's real cap-keeper (`KeptFiles`, 1 MiB a run).
 *
 * @module
 */

import { openSqliteStore } from "../../runtime/store/sqlite.ts";
import { KeptFiles } from "../../runtime/store/run_files.ts";
import { Redactor } from "../../runtime/store/redact.ts";
import type { RunRecord, StoredFile } from "../../runtime/store/store.ts";

/** A kept file that is a page with scripts. */
export const PAGE =
  `<!doctype html><script>parent.pwned = 1</script><img src=x onerror="parent.pwned=2">`;
const bytes = (t: string) => new TextEncoder().encode(t);

function record(id: string): RunRecord {
  return {
    id,
    parentId: null,
    kind: "skill",
    name: "scripted",
    toolkit: null,
    session: "s1",
    transport: "in-process",
    tokenLabel: null,
    startedAt: Date.now() - 5,
    endedAt: Date.now(),
    durationMs: 5,
    outcome: "ok",
    error: null,
    summary: null,
    args: "{}",
    result: "{}",
    eventCount: 0,
    llmTurns: 0,
    inputTokens: 0,
    outputTokens: 0,
  };
}

/** Writes runs `a` (hostile files, capped at 1 MiB) and `b` into `dbPath`. */
export function writeHostileRuns(dbPath: string): void {
  const kept = new KeptFiles(
    { maxBytes: 1 << 20, maxFiles: 10 },
    new Redactor(),
  );
  const huge = new Uint8Array(5 << 20).fill(0x41);
  const files: StoredFile[] = [
    { name: "1/../../x", size: 6, data: bytes("climb\n"), note: null },
    { name: "1/..", size: 3, data: bytes("dot"), note: null },
    { name: "1/page.html", size: PAGE.length, data: bytes(PAGE), note: null },
    { name: "1/huge.txt", size: huge.length, data: huge, note: null },
    {
      name: '1/<img src=x onerror="parent.pwned=3">.bin',
      size: 3,
      data: new Uint8Array([0xff, 0, 0xfe]),
      note: null,
    },
  ];
  kept.add(files);
  const store = openSqliteStore(dbPath);
  try {
    store.write([
      { run: record("run-a"), events: [], files: kept.list() },
      {
        run: record("run-b"),
        events: [],
        files: [{ name: "1/b.txt", size: 1, data: bytes("b"), note: null }],
      },
    ]);
  } finally {
    store.close();
  }
}
