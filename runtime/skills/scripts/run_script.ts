/**
 * One `run_skill_script` call: a fresh workspace (input files copied into
 * it), the script run confined by its interpreter with the skill's folder
 * read-only at /skill and the workspace read-write at /work (the working
 * directory): a tmpfs of the workspace quota in the script's own mount
 * namespace, never the host's disk (`workspace_mount.ts`). Output streamed
 * as bounded `log` events; the files it wrote read once within byte and
 * count caps (`workspace_files.ts`), sent back as size-capped `artifact`
 * events and kept for the run's history when the run store keeps files
 * (the files the script wrote, listed up to a count and with their content
 * up to a byte total; the store applies the same caps to the whole skill
 * run, `runtime/store/run_files.ts`); a note says what was left out and
 * when the workspace was full.
 *
 * @module
 */

import { dirname, extname, join, relative, resolve } from "node:path";
import { Buffer } from "node:buffer";
import { type Bind, runConfined } from "./script_process.ts";
import { findInterpreter, isExecutableFile } from "./interpreters.ts";
import { cut } from "../skill_md.ts";
import type { EgressBroker } from "../../egress/broker.ts";
import { type EgressProxy, openEgressProxy } from "../../egress/proxy.ts";
import type { StoredFile } from "../../store/store.ts";
import type { FilesKept } from "../../store/recorder.ts";
import {
  type CollectCaps,
  type Collected,
  type CollectedFile,
  DEFAULT_COLLECT_CAPS,
  type KeeperReport,
} from "./workspace_files.ts";
import {
  DEFAULT_WORKSPACE_QUOTA,
  KEEPER_FAILED,
  KEEPER_PROGRAMS,
  newMarker,
  workspaceDirs,
  type WorkspaceQuota,
} from "./workspace_mount.ts";
import {
  type ConfinementLayout,
  type ConfinementMode,
  denoArgs,
  detectConfinement,
} from "../../confine/confine.ts";

/** Limits of one script run. */
export interface ScriptLimits {
  /** Extension → interpreter program. */
  interpreters: Readonly<Record<string, string>>;
  /** Address-space cap in bytes. @default 512 MiB */
  memoryBytes?: number;
  /**
   * The workspace's quota, `/work` and `/tmp` together
   * (`sandbox.script_workspace_mb`, `sandbox.script_workspace_files`).
   * @default 64 MiB, 10,000 files
   */
  workspace?: WorkspaceQuota;
  /**
   * What the host reads back from the workspace, all files together
   * (`store.script_files_max_bytes`, `store.script_files_max`).
   * @default 4 MiB, 100 files
   */
  files?: CollectCaps;
  /**
   * `sandbox.confinement`: scripts run only confined, so when confinement
   * is off or does not work here a script is refused. @default "auto"
   */
  confinement?: ConfinementMode;
  /** The variables the skill declared and the policy grants. @default {} */
  env?: Readonly<Record<string, string>>;
  /**
   * The hosts the skill declared and the policy grants, and the broker
   * their requests go through (the script runs behind the egress relay).
   * @default no network
   */
  net?: { broker: EgressBroker; hosts: readonly string[] };
}

/** One call of the tool. */
export interface ScriptCall {
  /** The skill's folder (host path). */
  folder: string;
  /** The script, relative to the folder (already checked to be one). */
  script: string;
  args: readonly string[];
  stdin?: string;
  /** Files written into the workspace first: relative path → text. */
  files?: Readonly<Record<string, string>>;
  /**
   * The session's filesystem-toolkit root, bound at its `to` (see
   * `files_root.ts`). @default none
   */
  filesRoot?: Bind;
  /**
   * Hands the files the script wrote (names relative to the workspace) to
   * the run's history record when the run store is on, and how many more
   * were not read back; the store keeps them within its caps per run
   * (`runtime/store/run_files.ts`) and says what it kept. @default not kept
   */
  keep?: (files: StoredFile[], unlisted: number) => FilesKept;
  timeoutMs: number;
  signal?: AbortSignal;
  /** `log` and `artifact` events. */
  onEvent: (kind: "log" | "artifact", data: Record<string, unknown>) => void;
}

/** What the model gets back. */
export interface ScriptResult {
  exit_code: number;
  timed_out: boolean;
  stdout_tail: string;
  stderr_tail: string;
  /** Files the script wrote in its workspace, with their sizes. */
  artifacts: { name: string; bytes: number; sent: boolean }[];
  /** What of the files was left out and why, when some was. */
  files_note?: string;
  /** When the script filled its workspace's quota. */
  workspace_note?: string;
  /** What was kept for the run's history, when the store keeps files. */
  kept_for_history?: FilesKept;
  /** Where the session's files were mounted, when they were. */
  files_root?: { path: string; writable: boolean };
}

const TAIL_CHARS = 4000;
const LINE_CHARS = 2000;
// The most `log` events one run sends, and the largest artifact sent back.
const MAX_LOG_EVENTS = 200;
const MAX_ARTIFACT_BYTES = 1024 * 1024;

/**
 * Runs one script of a skill, confined; failures to start (no interpreter)
 * throw an Error whose message the model can read.
 *
 * @param call the script, its arguments and events
 * @param limits interpreters and caps
 * @returns the exit code, output tails and artifacts
 * @example
 * ```ts
 * import { runSkillScript } from "./run_script.ts";
 * import assert from "node:assert/strict";
 * const folder = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${folder}/hi.sh`, 'echo "hi $1" > out.txt; cat out.txt');
 * const kinds: string[] = [];
 * const result = await runSkillScript({
 *   folder, script: "hi.sh", args: ["you"], timeoutMs: 10_000,
 *   onEvent: (kind) => kinds.push(kind),
 * }, { interpreters: { ".sh": "sh" } });
 * assert.equal(result.exit_code, 0);
 * assert.equal(result.stdout_tail, "hi you\n");
 * assert.deepEqual(result.artifacts, [{ name: "out.txt", bytes: 7, sent: true }]);
 * assert.deepEqual(kinds, ["log", "artifact"]);
 * ```
 */
export async function runSkillScript(
  call: ScriptCall,
  limits: ScriptLimits,
): Promise<ScriptResult> {
  // A little over 80 lines: the workspace and the egress proxy are opened
  // and closed here, so the one `finally` sees both.
  const interpreter = await findInterpreter(call.script, limits.interpreters);
  if ("error" in interpreter) throw new Error(interpreter.error);
  const layout = await confinementLayout(call.script, limits);
  const memoryBytes = limits.memoryBytes ?? 512 * 1024 * 1024;
  const dirs = workspaceDirs(
    await Deno.realPath(await Deno.makeTempDir({ prefix: "skillbox-script-" })),
  );
  const quota = limits.workspace ?? DEFAULT_WORKSPACE_QUOTA;
  const caps = limits.files ?? DEFAULT_COLLECT_CAPS;
  const argv = [
    ...interpreterArgv(interpreter, {
      deno: layout.execPath,
      memoryBytes,
      filesRoot: call.filesRoot,
      hosts: limits.net?.hosts,
    }),
    `/skill/${call.script}`,
    ...call.args,
  ];
  // Deno reserves more address space than it uses: its heap cap is the V8
  // flag instead of an address-space limit.
  const cap = "deno" in interpreter ? 0 : memoryBytes;
  let net: EgressProxy | null = null;
  try {
    if (limits.net) {
      net = openEgressProxy({
        broker: limits.net.broker,
        allow: limits.net.hosts,
      });
    }
    await Deno.mkdir(dirs.mount, { recursive: true });
    const inputs = await writeInputs(dirs.inputs, call, quota);
    const { out, onOutput } = outputLogs(call);
    const exit = await runConfined({
      layout,
      argv,
      egress: net ? { socket: net.path, token: net.token } : undefined,
      binds: [
        { from: await Deno.realPath(call.folder), to: "/skill" },
        ...(call.filesRoot ? [call.filesRoot] : []),
      ],
      workspace: { dirs, quota, caps, marker: newMarker() },
      env: {
        PATH: "/usr/local/bin:/usr/bin:/bin",
        LANG: "C.UTF-8",
        ...limits.env,
      },
      cwd: "/work",
      timeoutMs: call.timeoutMs,
      memoryBytes: cap,
      stdin: call.stdin === undefined
        ? undefined
        : new TextEncoder().encode(call.stdin),
      signal: call.signal,
      onOutput,
    });
    call.signal?.throwIfAborted();
    if (!exit.workspace && exit.code === KEEPER_FAILED) {
      throw new Error(
        `Cannot run "${call.script}": ${
          out.stderr.trim() || "its workspace could not be set up"
        }`,
      );
    }
    const found: Collected = exit.workspace?.files ?? {
      files: [],
      found: 0,
      note: null,
    };
    // An input file the script left as it was is not the script's.
    const written = found.files.filter(({ name, data }) =>
      data === null || inputs.get(name) !== new TextDecoder().decode(data)
    );
    const artifacts = sendArtifacts(written, call.onEvent);
    const kept = call.keep?.(written, found.found - found.files.length);
    const stderrTail = exit.timedOut
      ? `${out.stderr}\n[killed: the script ran past its ${call.timeoutMs} ms timeout]`
      : out.stderr;
    const full = exit.workspace && workspaceNote(exit.workspace, quota);
    return {
      exit_code: exit.code,
      timed_out: exit.timedOut,
      stdout_tail: out.stdout,
      stderr_tail: stderrTail,
      artifacts,
      ...(found.note && { files_note: found.note }),
      ...(full && { workspace_note: full }),
      ...(kept && { kept_for_history: kept }),
      ...(call.filesRoot && {
        files_root: {
          path: call.filesRoot.to,
          writable: call.filesRoot.writable === true,
        },
      }),
    };
  } finally {
    net?.close();
    await Deno.remove(dirs.dir, { recursive: true }).catch(() => {});
  }
}

// Why the script's writes failed at the end, if its workspace was full.
function workspaceNote(
  report: KeeperReport,
  quota: WorkspaceQuota,
): string | null {
  const mib = (quota.bytes / 1024 / 1024).toFixed(0);
  const what: string[] = [];
  if (report.bytesFull) what.push(`${mib} MiB (sandbox.script_workspace_mb)`);
  if (report.filesFull) {
    what.push(`${quota.files} files (sandbox.script_workspace_files)`);
  }
  if (what.length === 0) return null;
  return `The workspace (/work and /tmp) reached its quota of ${
    what.join(" and ")
  }: writes past it failed with "No space left on device"`;
}

// The tails of stdout and stderr, and each chunk as a bounded `log` event.
function outputLogs(call: ScriptCall): {
  out: { stdout: string; stderr: string };
  onOutput: (stream: "stdout" | "stderr", text: string) => void;
} {
  const out = { stdout: "", stderr: "" };
  let logs = 0;
  const onOutput = (stream: "stdout" | "stderr", text: string) => {
    // Neither cut keeps half of a character outside the BMP.
    out[stream] = (out[stream] + text).slice(-TAIL_CHARS)
      .replace(/^[\udc00-\udfff]/, "");
    if (logs >= MAX_LOG_EVENTS) return;
    logs++;
    call.onEvent("log", {
      level: stream === "stderr" ? "warn" : "info",
      message: cut(text, LINE_CHARS, "…"),
      stream,
    });
  };
  return { out, onOutput };
}

/**
 * The interpreter's command before the script. The sandboxed Deno runs
 * with no permission but reading the skill, the workspace (and the
 * session's files when mounted) and writing the workspace, from modules
 * already in the cache; the network only to the granted hosts (through the
 * relay).
 *
 * @param interpreter a system interpreter's path, or the sandboxed Deno
 * @param options the Deno binary, the memory cap, the files and the hosts
 * @returns the program and its arguments, the script to follow
 * @example A system interpreter runs as itself
 * ```ts
 * import { interpreterArgv } from "./run_script.ts";
 * import assert from "node:assert/strict";
 * const argv = interpreterArgv({ path: "/usr/bin/python3" }, { deno: "/d", memoryBytes: 1 });
 * assert.deepEqual(argv, ["/usr/bin/python3"]);
 * ```
 */
export function interpreterArgv(
  interpreter: { path: string } | { deno: true },
  options: {
    deno: string;
    memoryBytes: number;
    filesRoot?: Bind;
    hosts?: readonly string[];
  },
): string[] {
  if ("path" in interpreter) return [interpreter.path];
  const { deno, memoryBytes, filesRoot: files, hosts = [] } = options;
  const allowNet = hosts.includes("*")
    ? ["--allow-net"]
    : hosts.length > 0
    ? [`--allow-net=${hosts.join(",")}`]
    : [];
  const read = ["/skill", "/work", ...(files ? [files.to] : [])];
  const write = ["/work", ...(files?.writable ? [files.to] : [])];
  return [
    deno,
    // As scripts have always started: Deno's own warnings reach the
    // script's stderr, and remote modules already in the cache load
    // (--cached-only still stops any fetch; --no-config finds no lockfile).
    ...denoArgs({
      quiet: false,
      noLock: false,
      noRemote: false,
      heapMb: Math.max(16, Math.floor(memoryBytes / 1024 / 1024)),
      permissions: [
        `--allow-read=${read.join(",")}`,
        `--allow-write=${write.join(",")}`,
        ...allowNet,
      ],
    }),
  ];
}

// The confinement's layout, or why scripts cannot run here.
async function confinementLayout(
  script: string,
  limits: ScriptLimits,
): Promise<ConfinementLayout> {
  let why: string;
  try {
    const status = await detectConfinement(limits.confinement ?? "auto");
    // The workspace's keeper needs these besides bwrap.
    const missing = status.layout && await missingProgram(KEEPER_PROGRAMS);
    if (status.layout && !missing) return status.layout;
    why = missing ? `"${missing}" is not installed` : status.reason;
  } catch (error) {
    why = (error as Error).message;
  }
  throw new Error(
    `Cannot run "${script}": skill scripts run only under OS confinement (${why})`,
  );
}

// The first of the programs that is not an executable file, if any.
async function missingProgram(
  programs: readonly string[],
): Promise<string | null> {
  for (const path of programs) {
    if (!(await isExecutableFile(path))) return path;
  }
  return null;
}

// Writes the input files (the keeper copies them into the tmpfs); returns
// their paths and contents so unchanged inputs are not sent back as artifacts.
async function writeInputs(
  workspace: string,
  { script, files = {} }: Pick<ScriptCall, "script" | "files">,
  quota: WorkspaceQuota,
): Promise<Map<string, string>> {
  // The host's temp dir is no tmpfs of the quota (the keeper copies the
  // inputs into one): files over it are refused before any is written.
  const inputs = new Map<string, string>();
  const folders = new Set<string>();
  for (const [name, text] of Object.entries(files)) {
    const path = resolve(workspace, name);
    const rel = relative(workspace, path);
    if (rel === "" || rel.startsWith("..")) {
      throw new Error(`Input file "${name}" must stay inside the workspace`);
    }
    for (let d = dirname(rel); d !== "."; d = dirname(d)) folders.add(d);
    inputs.set(rel, text);
  }
  const bytes = inputs.values().reduce((n, t) => n + Buffer.byteLength(t), 0);
  if (bytes > quota.bytes || inputs.size + folders.size > quota.files) {
    throw new Error(
      `Cannot run "${script}": Cannot set up the script's workspace: the input files do not fit its quota of ${quota.bytes} bytes and ${quota.files} files`,
    );
  }
  await Deno.mkdir(workspace, { recursive: true });
  for (const [rel, text] of inputs) {
    const path = join(workspace, rel);
    await Deno.mkdir(dirname(path), { recursive: true });
    await Deno.writeTextFile(path, text);
  }
  return inputs;
}

// The files as `artifact` events (each within the per-file cap), listed
// with their sizes.
function sendArtifacts(
  files: readonly CollectedFile[],
  onEvent: ScriptCall["onEvent"],
): ScriptResult["artifacts"] {
  const listed: ScriptResult["artifacts"] = [];
  for (const { name, size, data } of files) {
    if (data === null || size > MAX_ARTIFACT_BYTES) {
      listed.push({ name, bytes: size, sent: false });
      continue;
    }
    onEvent("artifact", {
      name,
      mime: mimeOf(name),
      chunk: Buffer.from(data).toString("base64"),
      final: true,
    });
    listed.push({ name, bytes: size, sent: true });
  }
  return listed;
}

// A Map: the script names the file, and an object's lookup of
// "constructor" finds Object, a function JSON drops from the event.
const MIME_TYPES = new Map([
  ["json", "application/json"],
  ["csv", "text/csv"],
  ["txt", "text/plain"],
  ["md", "text/markdown"],
  ["html", "text/html"],
  ["png", "image/png"],
]);

function mimeOf(name: string): string {
  const ext = extname(name).slice(1).toLowerCase();
  return MIME_TYPES.get(ext) ?? "application/octet-stream";
}
