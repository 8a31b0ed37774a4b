/**
 * One `run_skill_script` call: a fresh workspace (input files written into
 * it), the script run confined by its interpreter with the skill's folder
 * read-only at /skill and the workspace read-write at /work (the working
 * directory), output streamed as bounded `log` events, the files it wrote
 * sent back as size-capped `artifact` events, kept for the run's history
 * when the run store keeps files (`workspace_keep.ts`), and the workspace
 * removed.
 *
 * @module
 */

import { dirname, join, relative, resolve } from "node:path";
import { Buffer } from "node:buffer";
import { type Bind, runConfined } from "./confined.ts";
import { findInterpreter } from "./script_files.ts";
import { type ScriptRelay, scriptRelay } from "./script_egress.ts";
import type { EgressBroker } from "../../egress/broker.ts";
import {
  keepWorkspace,
  type KeptSummary,
  type WorkspaceKeep,
} from "./workspace_keep.ts";
import { Confiner } from "../../sandbox/confiner.ts";
import type { ConfinementMode } from "../../sandbox/confinement.ts";
import type { ConfinementLayout } from "../../sandbox/confinement_args.ts";

/** Limits of one script run. */
export interface ScriptLimits {
  /** Extension → interpreter program. */
  interpreters: Readonly<Record<string, string>>;
  /** Address-space cap in bytes. @default 512 MiB */
  memoryBytes?: number;
  /** Largest artifact sent back, in bytes. @default 1 MiB */
  maxArtifactBytes?: number;
  /** `log` events per run. @default 200 */
  maxLogEvents?: number;
  /**
   * `sandbox.confinement`: scripts run only confined, so when confinement
   * is off or does not work here a script is refused. @default "auto"
   */
  confinement?: ConfinementMode;
  /** The variables the skill declared and the policy grants. @default {} */
  env?: Readonly<Record<string, string>>;
  /**
   * The hosts the skill declared and the policy grants, and the broker
   * their requests go through (see `script_egress.ts`). @default no network
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
   * Keep the workspace's files for the run's history record (the run store
   * is on). @default not kept
   */
  keep?: WorkspaceKeep;
  /** Extra environment variables (the granted ones, see `script_env.ts`). */
  env?: Readonly<Record<string, string>>;
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
  /** What was kept for the run's history, when the store keeps files. */
  kept_for_history?: KeptSummary;
  /** Where the session's files were mounted, when they were. */
  files_root?: { path: string; writable: boolean };
}

const TAIL_CHARS = 4000;
const LINE_CHARS = 2000;

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
  // A little over 80 lines: the workspace and the relay are opened and
  // closed here, so the one `finally` sees both.
  const interpreter = await findInterpreter(call.script, limits.interpreters);
  if ("error" in interpreter) throw new Error(interpreter.error);
  const layout = await confinementLayout(call.script, limits);
  const memoryBytes = limits.memoryBytes ?? 512 * 1024 * 1024;
  const workspace = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "skillbox-script-" }),
  );
  const argv = [
    ...command(interpreter, layout.execPath, memoryBytes, call, limits),
    `/skill/${call.script}`,
    ...call.args,
  ];
  // Deno reserves more address space than it uses: its heap cap is the V8
  // flag instead of an address-space limit.
  const cap = "deno" in interpreter ? 0 : memoryBytes;
  let net: ScriptRelay | null = null;
  try {
    if (limits.net) {
      net = scriptRelay(argv, {
        ...limits.net,
        deno: layout.execPath,
        memoryBytes: cap,
        principal: `skill script "${call.script}"`,
      });
    }
    const inputs = await writeInputs(workspace, call.files ?? {});
    const { out, onOutput } = outputLogs(call, limits.maxLogEvents ?? 200);
    const exit = await runConfined({
      layout,
      argv: net?.argv ?? argv,
      relay: net?.relay,
      binds: [
        { from: await Deno.realPath(call.folder), to: "/skill" },
        { from: workspace, to: "/work", writable: true },
        ...(call.filesRoot ? [call.filesRoot] : []),
        ...net?.binds ?? [],
      ],
      env: {
        PATH: "/usr/local/bin:/usr/bin:/bin",
        LANG: "C.UTF-8",
        ...call.env,
        ...net?.env,
      },
      cwd: "/work",
      timeoutMs: call.timeoutMs,
      // Behind the relay, the cap is on the script (prlimit inside).
      memoryBytes: net ? 0 : cap,
      stdin: call.stdin === undefined
        ? undefined
        : new TextEncoder().encode(call.stdin),
      signal: call.signal,
      onOutput,
    });
    call.signal?.throwIfAborted();
    const artifacts = await sendArtifacts(
      workspace,
      inputs,
      limits.maxArtifactBytes ?? 1024 * 1024,
      call.onEvent,
    );
    const kept = call.keep && await keepWorkspace(workspace, inputs, call.keep);
    const stderrTail = exit.timedOut
      ? `${out.stderr}\n[killed: the script ran past its ${call.timeoutMs} ms timeout]`
      : out.stderr;
    return {
      exit_code: exit.code,
      timed_out: exit.timedOut,
      stdout_tail: out.stdout,
      stderr_tail: stderrTail,
      artifacts,
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
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
}

// The tails of stdout and stderr, and each chunk as a bounded `log` event.
function outputLogs(
  call: ScriptCall,
  maxLogs: number,
): {
  out: { stdout: string; stderr: string };
  onOutput: (stream: "stdout" | "stderr", text: string) => void;
} {
  const out = { stdout: "", stderr: "" };
  let logs = 0;
  const onOutput = (stream: "stdout" | "stderr", text: string) => {
    out[stream] = (out[stream] + text).slice(-TAIL_CHARS);
    if (logs >= maxLogs) return;
    logs++;
    call.onEvent("log", {
      level: stream === "stderr" ? "warn" : "info",
      message: text.length > LINE_CHARS
        ? text.slice(0, LINE_CHARS) + "…"
        : text,
      stream,
    });
  };
  return { out, onOutput };
}

// The interpreter's command before the script. The sandboxed Deno runs with
// no permission but reading the skill, the workspace (and the session's
// files when mounted) and writing the workspace, from modules already in the
// cache; the network only to the granted hosts (through the relay).
function command(
  interpreter: { path: string } | { deno: true },
  deno: string,
  memoryBytes: number,
  call: Pick<ScriptCall, "filesRoot">,
  limits: Pick<ScriptLimits, "net">,
): string[] {
  if ("path" in interpreter) return [interpreter.path];
  const files = call.filesRoot;
  const hosts = limits.net?.hosts ?? [];
  const allowNet = hosts.includes("*")
    ? ["--allow-net"]
    : hosts.length > 0
    ? [`--allow-net=${hosts.join(",")}`]
    : [];
  const read = ["/skill", "/work", ...(files ? [files.to] : [])];
  const write = ["/work", ...(files?.writable ? [files.to] : [])];
  return [
    deno,
    "run",
    "--no-prompt",
    "--no-config",
    "--cached-only",
    `--allow-read=${read.join(",")}`,
    `--allow-write=${write.join(",")}`,
    ...allowNet,
    `--v8-flags=--max-old-space-size=${
      Math.max(16, Math.floor(memoryBytes / 1024 / 1024))
    }`,
  ];
}

// The confinement's layout, or why scripts cannot run here.
async function confinementLayout(
  script: string,
  limits: ScriptLimits,
): Promise<ConfinementLayout> {
  let why: string;
  try {
    const status = await new Confiner(limits.confinement ?? "auto").status();
    if (status.layout) return status.layout;
    why = status.reason;
  } catch (error) {
    why = (error as Error).message;
  }
  throw new Error(
    `Cannot run "${script}": skill scripts run only under OS confinement (${why})`,
  );
}

// Writes the input files; returns their paths and contents so unchanged
// inputs are not sent back as artifacts.
async function writeInputs(
  workspace: string,
  files: Readonly<Record<string, string>>,
): Promise<Map<string, string>> {
  const inputs = new Map<string, string>();
  for (const [name, text] of Object.entries(files)) {
    const path = resolve(workspace, name);
    const rel = relative(workspace, path);
    if (rel === "" || rel.startsWith("..")) {
      throw new Error(`Input file "${name}" must stay inside the workspace`);
    }
    await Deno.mkdir(dirname(path), { recursive: true });
    await Deno.writeTextFile(path, text);
    inputs.set(rel, text);
  }
  return inputs;
}

async function sendArtifacts(
  workspace: string,
  inputs: Map<string, string>,
  maxBytes: number,
  onEvent: ScriptCall["onEvent"],
): Promise<ScriptResult["artifacts"]> {
  const listed: ScriptResult["artifacts"] = [];
  const walk = async (dir: string, depth: number) => {
    if (depth > 8 || listed.length >= 100) return;
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path, depth + 1);
      if (!entry.isFile) continue; // symlinks are never followed
      const name = relative(workspace, path);
      const { size } = await Deno.lstat(path);
      if (size <= maxBytes) {
        const bytes = await Deno.readFile(path);
        if (inputs.get(name) === new TextDecoder().decode(bytes)) continue;
        onEvent("artifact", {
          name,
          mime: mimeOf(name),
          chunk: Buffer.from(bytes).toString("base64"),
          final: true,
        });
        listed.push({ name, bytes: size, sent: true });
      } else listed.push({ name, bytes: size, sent: false });
    }
  };
  await walk(workspace, 0);
  return listed.sort((a, b) => a.name.localeCompare(b.name));
}

function mimeOf(name: string): string {
  const ext = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  return ({
    json: "application/json",
    csv: "text/csv",
    txt: "text/plain",
    md: "text/markdown",
    html: "text/html",
    png: "image/png",
  } as Record<string, string>)[ext] ?? "application/octet-stream";
}
