/**
 * A skill script's workspace is memory the kernel bounds, never the host's
 * disk. The confined command runs under a small trusted "keeper" (bash,
 * outside the sandbox, in a user and mount namespace of its own made by
 * `unshare`): it mounts a tmpfs with `size=` and `nr_inodes=` (bubblewrap
 * can set only the size) on the run's mount point, copies the input files
 * in, and runs bwrap, which binds the tmpfs's `work` folder at `/work` and
 * its `tmp` folder at `/tmp`. A write past the quota, in bytes or in files,
 * fails inside with ENOSPC; the host folder under the mount stays empty.
 *
 * Why a keeper rather than `bwrap --size --tmpfs /work`: a tmpfs lives as
 * long as its mount namespace, so its files must come out before the
 * namespace ends, and only after every process of the script is gone (no
 * file changes under the reader); and the host (run without
 * `--allow-all`) may not read another namespace through `/proc/<pid>/root`.
 * The keeper is that moment and that reader: when bwrap has exited (the
 * kernel has then ended the script's PID namespace) it writes on stdout a
 * marker the script cannot know (a random nonce in the keeper's own
 * arguments, outside the script's PID namespace), a report (exit code,
 * whether the tmpfs is full) and the files, already bounded: regular files
 * only (never a symlink), at most `maxFiles` by name, content only while
 * the total stays within `maxBytes`, each file's size taken before a byte
 * is sent and no more than it sent. The host splits its stdout at the
 * marker and parses the rest within the same caps (`workspace_files.ts`).
 * The keeper dies with the host (`setpriv --pdeathsig`), bwrap with the
 * keeper, and the tmpfs with them.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { join } from "node:path";
import type { CollectCaps } from "./workspace_files.ts";

/** The workspace quota of one script run (`sandbox.script_workspace_*`). */
export interface WorkspaceQuota {
  /** Bytes of file content, `/work` and `/tmp` together. */
  bytes: number;
  /** Files and folders, `/work` and `/tmp` together. */
  files: number;
}

/** The quota when the configuration names none: 64 MiB, 10,000 files. */
export const DEFAULT_WORKSPACE_QUOTA: WorkspaceQuota = {
  bytes: 64 * 1024 * 1024,
  files: 10_000,
};

/** util-linux, as `prlimit`. */
export const UNSHARE = "/usr/bin/unshare";
/** util-linux: the keeper's parent-death signal. */
export const SETPRIV = "/usr/bin/setpriv";
/** The keeper's shell. */
export const BASH = "/bin/bash";

/** What the keeper runs besides bwrap (util-linux, bash, coreutils, findutils). */
export const KEEPER_PROGRAMS: readonly string[] = [
  UNSHARE,
  SETPRIV,
  BASH,
  "/usr/bin/mount",
  "/usr/bin/stat",
  "/usr/bin/find",
  "/usr/bin/sort",
  "/usr/bin/head",
  "/usr/bin/env",
];

/** The keeper's exit code when the workspace could not be set up. */
export const KEEPER_FAILED = 125;

// Entries the keeper makes in the tmpfs (its root and two folders) are on
// top of the quota's files.
const OWN_INODES = 3;
const PAGE = 4096;

// The keeper. Arguments: the marker, mount point, inputs folder, size,
// inodes, most bytes and files sent back, then bwrap's command line.
const KEEPER = `
marker=$1 ns=$2 in=$3 size=$4 inodes=$5 maxbytes=$6 maxfiles=$7
shift 7
fail() { echo "Cannot set up the script's workspace: $1" >&2; exit ${KEEPER_FAILED}; }
mount -t tmpfs -o "size=$size,nr_inodes=$inodes,mode=0700" skillbox-workspace "$ns" ||
  fail "mounting its tmpfs failed"
mkdir "$ns/work" "$ns/tmp" || fail "its tmpfs refused its folders"
shopt -s nullglob dotglob
inputs=("$in"/*)
[ \${#inputs[@]} -eq 0 ] || cp -R "$in/." "$ns/work/" 2>/dev/null ||
  fail "the input files do not fit its quota of $size bytes and $inodes files"
killed=
trap 'killed=1; kill -KILL "$b" 2>/dev/null' TERM
# bash adds SHLVL and _ to what it runs: the script sees only its own.
env -u SHLVL -u _ "$@" <&0 &
b=$!
wait "$b"
c=$?
# A trapped TERM cuts that wait short with 143, and bash may already have
# reaped bwrap: waiting again returns bwrap's own status (127: none known).
while [ -n "$killed" ]; do
  killed=
  wait "$b" 2>/dev/null
  r=$?
  [ "$r" -eq 127 ] || c=$r
done
export LC_ALL=C
cd "$ns/work" || exit "$c"
read -r free inodes_free < <(stat -f -c '%f %d' "$ns")
# Every regular file by name (no more than the quota's files can exist).
mapfile -d '' -t all < <(find . -xdev -maxdepth 9 -type f -printf '%P/%s\\0' | sort -z)
printf '%s\\nR %s %s %s %s\\n' "$marker" "$c" "$free" "$inodes_free" "\${#all[@]}"
budget=$maxbytes
for x in "\${all[@]:0:maxfiles}"; do
  f=\${x%/*} n=\${x##*/}
  if [ "$n" -le "$budget" ]; then send=1 budget=$((budget - n)); else send=0; fi
  printf '%s %s %s\\n%s' "$n" "$send" "\${#f}" "$f"
  # Exactly the size announced, even if a read fell short (then zeros).
  if [ "$send" = 1 ]; then
    { head -c "$n" -- "$f" 2>/dev/null; head -c "$n" /dev/zero; } | head -c "$n"
  fi
done
exit "$c"
`;

/** The host paths of one run's workspace. */
export interface WorkspaceDirs {
  /** The run's folder on the host (holds `in` and `ns`, both small). */
  dir: string;
  /** Input files, written by the host before the run, copied in. */
  inputs: string;
  /** The tmpfs's mount point (empty on the host). */
  mount: string;
  /** Bound at `/work` inside. */
  work: string;
  /** Bound at `/tmp` inside. */
  tmp: string;
}

/**
 * The paths of a run folder's workspace.
 *
 * @param dir the run's folder (real path)
 * @returns its parts
 * @example
 * ```ts
 * import { workspaceDirs } from "./workspace_mount.ts";
 * import assert from "node:assert/strict";
 * assert.equal(workspaceDirs("/t/run").work, "/t/run/ns/work");
 * ```
 */
export function workspaceDirs(dir: string): WorkspaceDirs {
  const mount = join(dir, "ns");
  return {
    dir,
    inputs: join(dir, "in"),
    mount,
    work: join(mount, "work"),
    tmp: join(mount, "tmp"),
  };
}

/** One run's workspace under the keeper. */
export interface KeeperRun {
  /** The run's folders. */
  dirs: WorkspaceDirs;
  /** The tmpfs's quota. */
  quota: WorkspaceQuota;
  /** The caps of what is sent back. */
  caps: CollectCaps;
  /** What the keeper writes before its report (see {@link newMarker}). */
  marker: string;
}

/**
 * A confined command under the keeper.
 *
 * @param inner bwrap's command line
 * @param run the run's workspace
 * @returns the keeper's command line (the program is `unshare`)
 * @example
 * ```ts
 * import { keeperCommand, workspaceDirs } from "./workspace_mount.ts";
 * import assert from "node:assert/strict";
 * const cmd = keeperCommand({ program: "/usr/bin/bwrap", args: ["--", "/bin/true"] }, {
 *   dirs: workspaceDirs("/t/run"), quota: { bytes: 1 << 20, files: 10 },
 *   caps: { maxBytes: 100, maxFiles: 5 }, marker: "m",
 * });
 * assert.equal(cmd.program, "/usr/bin/unshare");
 * assert.deepEqual(cmd.args.slice(-10), ["m", "/t/run/ns", "/t/run/in", "1048576", "13",
 *   "100", "5", "/usr/bin/bwrap", "--", "/bin/true"]);
 * ```
 */
export function keeperCommand(
  inner: { program: string; args: readonly string[] },
  run: KeeperRun,
): { program: string; args: string[] } {
  const { dirs, quota, caps } = run;
  return {
    program: UNSHARE,
    args: [
      "--user",
      "--map-root-user",
      "--mount",
      "--propagation",
      "private",
      "--",
      SETPRIV,
      "--pdeathsig",
      "KILL",
      "--",
      // -p: the keeper runs outside bwrap with the script's environment,
      // so it takes no functions, BASH_ENV or SHELLOPTS from it.
      BASH,
      "-p",
      "-c",
      KEEPER,
      "skillbox-keeper",
      run.marker,
      dirs.mount,
      dirs.inputs,
      String(Math.max(PAGE, Math.ceil(quota.bytes / PAGE) * PAGE)),
      String(Math.max(1, quota.files) + OWN_INODES),
      String(Math.max(0, Math.floor(caps.maxBytes))),
      String(Math.max(0, Math.floor(caps.maxFiles))),
      inner.program,
      ...inner.args,
    ],
  };
}

/**
 * A fresh marker for one run: what the keeper writes on stdout before its
 * report, unknown to the script.
 *
 * @returns 32 hex digits
 * @example
 * ```ts
 * import { newMarker } from "./workspace_mount.ts";
 * import assert from "node:assert/strict";
 * assert.match(newMarker(), /^[0-9a-f]{32}$/);
 * ```
 */
export function newMarker(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Buffer.from(bytes).toString("hex");
}

/**
 * Splits a stdout stream at the marker: what comes before is the script's
 * output, what comes after the keeper's report.
 *
 * @param marker the run's marker
 * @returns `push` (a chunk in; the script's part and the keeper's part
 *   out) and `end` (the script's output held back, when no marker came)
 * @example The marker split across chunks
 * ```ts
 * import { markerSplitter } from "./workspace_mount.ts";
 * import assert from "node:assert/strict";
 * const split = markerSplitter("XYZ");
 * const t = (s: string) => new TextEncoder().encode(s);
 * const d = (b: Uint8Array) => new TextDecoder().decode(b);
 * const a = split.push(t("out X"));
 * const b = split.push(t("YZ\nR 0"));
 * assert.deepEqual([d(a.script), d(a.keeper), d(b.script), d(b.keeper)], ["out ", "", "", "R 0"]);
 * assert.equal(d(markerSplitter("XYZ").push(t("line\n")).script), "line\n");
 * ```
 */
export function markerSplitter(marker: string): {
  push(chunk: Uint8Array): { script: Uint8Array; keeper: Uint8Array };
  end(): Uint8Array;
} {
  const mark = Buffer.from(marker + "\n");
  const empty = new Uint8Array(0);
  let held = empty;
  let found = false;
  return {
    push(chunk) {
      if (found) return { script: empty, keeper: chunk };
      const all = Buffer.concat([held, chunk]);
      const at = all.indexOf(mark);
      if (at >= 0) {
        found = true;
        held = empty;
        return {
          script: all.subarray(0, at),
          keeper: all.subarray(at + mark.length),
        };
      }
      // Hold back only what could be the marker's start (output waiting
      // on the script's next line still reaches the model live).
      const keep = prefixAtEnd(all, mark);
      held = all.subarray(all.length - keep);
      return { script: all.subarray(0, all.length - keep), keeper: empty };
    },
    end() {
      const rest = held;
      held = empty;
      return rest;
    },
  };
}

// The length of the longest end of `bytes` that begins `mark`.
function prefixAtEnd(bytes: Buffer, mark: Buffer): number {
  for (let k = Math.min(bytes.length, mark.length - 1); k > 0; k--) {
    if (bytes.subarray(bytes.length - k).equals(mark.subarray(0, k))) return k;
  }
  return 0;
}
