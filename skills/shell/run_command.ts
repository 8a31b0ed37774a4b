/**
 * `run_command`: runs an allow-listed program, streaming its output as log
 * events while it runs.
 *
 * @module
 */

import type { Context, ToolDef } from "../../sandbox/sdk/types.ts";

interface Args {
  command: string;
  args?: string[];
  stdin?: string;
  cwd?: string;
}

/**
 * The toolkit's config as a call gets it: the host checked it against
 * toolkit.ts's schema and filled in its defaults (and refuses the call
 * when it does not fit), so it is read here as it is.
 */
interface ShellConfig {
  allowed_commands: string[];
  cwd?: string;
  env?: Record<string, string>;
  max_output_bytes: number;
}

// Log events are for watching progress; past this many the result still has
// the (capped) output, and the agent is not flooded with events.
const MAX_LOG_LINES = 2_000;
const DEFAULT_PATH =
  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export default {
  kind: "tool",
  name: "run_command",
  toolkit: "shell",
  description:
    "Run an allowed command-line program with an argument list and get its exit code, stdout and stderr. Use it for builds, tests, git, package managers and other CLI tools; output streams as log lines while it runs. No shell: pipes, redirects and globs are not interpreted.",
  tags: ["shell", "command", "exec", "process"],
  input: {
    type: "object",
    properties: {
      command: {
        type: "string",
        description: 'The program, e.g. "git" (must be in allowed_commands)',
      },
      args: {
        type: "array",
        items: { type: "string" },
        description: 'Arguments, one per item, e.g. ["log", "-n", "5"]',
      },
      stdin: { type: "string", description: "Text written to standard input" },
      cwd: {
        type: "string",
        description:
          "Subdirectory of the configured cwd to run in (relative, no ..)",
      },
    },
    required: ["command"],
    additionalProperties: false,
  },
  output: {
    type: "object",
    properties: {
      exit_code: { type: ["integer", "null"] },
      signal: { type: ["string", "null"] },
      stdout: { type: "string" },
      stderr: { type: "string" },
      stdout_truncated: { type: "boolean" },
      stderr_truncated: { type: "boolean" },
      duration_ms: { type: "integer" },
    },
  },
  async run(args, ctx) {
    const cfg = ctx.config as unknown as ShellConfig;
    const program = resolveCommand(args.command, cfg.allowed_commands);
    // An empty cwd is none, as toolkit.ts grants it.
    const cwd = workingDir(cfg.cwd || undefined, args.cwd);
    ctx.signal.throwIfAborted();

    const started = Date.now();
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(program, {
        args: args.args ?? [],
        cwd,
        clearEnv: true,
        env: { PATH: DEFAULT_PATH, LANG: "C.UTF-8", ...cfg.env },
        stdin: args.stdin === undefined ? "null" : "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) {
        throw new Error(`Command "${args.command}" was not found`);
      }
      throw err;
    }

    const aborted = Promise.withResolvers<void>();
    const kill = () => {
      aborted.resolve();
      try {
        child.kill("SIGKILL");
      } catch { /* already exited */ }
    };
    ctx.signal.addEventListener("abort", kill, { once: true });
    try {
      const logs = { left: MAX_LOG_LINES };
      // Output is read while stdin is written: a program that answers as it
      // reads (cat, sort -m) stops reading once its unread output fills.
      const [stdout, stderr, status] = await Promise.all([
        collect(child.stdout, "info", ctx, cfg.max_output_bytes, logs),
        collect(child.stderr, "warn", ctx, cfg.max_output_bytes, logs),
        child.status,
        // A grandchild can hold stdin open without reading it: the write
        // under way never ends, so abort stops waiting for it.
        args.stdin !== undefined &&
        Promise.race([writeStdin(child, args.stdin), aborted.promise]),
      ]);
      // Aborted means `kill` ran: abort listeners run synchronously.
      if (ctx.signal.aborted) {
        throw new Error(
          `Command "${args.command}" was killed: the call was aborted (${
            abortReason(ctx.signal)
          })`,
        );
      }
      const data = {
        exit_code: status.signal ? null : status.code,
        signal: status.signal,
        stdout: stdout.text,
        stderr: stderr.text,
        stdout_truncated: stdout.truncated,
        stderr_truncated: stderr.truncated,
        duration_ms: Date.now() - started,
      };
      return {
        __skillbox_output: true,
        data,
        summary: status.signal
          ? `"${args.command}" was terminated by ${status.signal}`
          : `"${args.command}" exited with code ${status.code}`,
        exit_code: data.exit_code,
      };
    } finally {
      ctx.signal.removeEventListener("abort", kill);
    }
  },
} satisfies ToolDef<Args>;

/**
 * Maps the requested command to the program to spawn. A bare name matches
 * an equal entry, or an absolute entry with that base name (so "git" runs
 * "/usr/bin/git" when that is what is allowed). A path matches only itself:
 * "/tmp/x/git" is not "git".
 */
function resolveCommand(command: string, allowed: string[]): string {
  if (typeof command !== "string" || command === "") {
    throw new TypeError("command must be a non-empty string");
  }
  if (allowed.includes(command)) return command;
  if (!command.includes("/")) {
    const abs = allowed.find((a) =>
      a.startsWith("/") && a.slice(a.lastIndexOf("/") + 1) === command
    );
    if (abs) return abs;
  }
  const list = allowed.length > 0
    ? allowed.map((a) => `"${a}"`).join(", ")
    : "none";
  throw new Error(
    `Command "${command}" is not allowed: allowed commands are ${list}`,
  );
}

function workingDir(base: string | undefined, sub: string | undefined) {
  if (sub === undefined || sub === "" || sub === ".") return base;
  if (sub.startsWith("/") || sub.split("/").includes("..")) {
    throw new Error(
      `cwd "${sub}" must be a relative subdirectory of the configured cwd, without ..`,
    );
  }
  return `${base ?? "."}/${sub}`;
}

/** Reads a stream to its end, logging each line and keeping a capped copy. */
async function collect(
  stream: ReadableStream<Uint8Array>,
  level: "info" | "warn",
  ctx: Context,
  maxBytes: number,
  logs: { left: number },
): Promise<{ text: string; truncated: boolean }> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  // A grandchild that inherited the pipe can keep it open after we kill the
  // child; stop reading at abort instead of waiting for it.
  const onAbort = () => reader.cancel().catch(() => {});
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  let kept = "";
  let keptBytes = 0;
  let truncated = false;
  let line = "";
  // Set once an overlong line was logged: its rest is dropped.
  let skipping = false;
  const emit = (text: string) => {
    if (logs.left > 0) {
      logs.left--;
      // A line longer than the cap is logged by its head.
      ctx.log(level, text.slice(0, maxBytes));
      if (logs.left === 0) {
        ctx.log("warn", "Further output is not streamed (it is in the result)");
      }
    }
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!truncated) {
        const bytes = new TextEncoder().encode(value);
        if (keptBytes + bytes.length <= maxBytes) {
          kept += value;
          keptBytes += bytes.length;
        } else {
          // Cut in bytes at a character's end (encodeInto stops before
          // one that does not fit whole).
          const room = new Uint8Array(maxBytes - keptBytes);
          kept += value.slice(
            0,
            new TextEncoder().encodeInto(value, room).read,
          );
          truncated = true;
        }
      }
      // Only the new chunk can hold a newline: searching the whole held
      // line again for each chunk is quadratic in a line sent in small writes.
      const [head = "", ...ends] = value.split("\n");
      line += head;
      for (const next of ends) {
        if (skipping) skipping = false;
        else emit(line.replace(/\r$/, ""));
        line = next;
      }
      // An overlong line is logged (by its head) now, not held whole.
      if (!skipping && line.length > maxBytes) {
        emit(line);
        skipping = true;
      }
      if (skipping) line = "";
    }
    if (line !== "") emit(line);
  } finally {
    ctx.signal.removeEventListener("abort", onAbort);
  }
  return { text: kept, truncated };
}

async function writeStdin(child: Deno.ChildProcess, text: string) {
  const w = child.stdin.getWriter();
  // A program that exits without reading stdin closes the pipe; that is its
  // business, not an error of the call.
  await w.write(new TextEncoder().encode(text)).catch(() => {});
  await w.close().catch(() => {});
}

function abortReason(signal: AbortSignal): string {
  const r = signal.reason;
  return r instanceof Error ? r.message : String(r ?? "aborted");
}
