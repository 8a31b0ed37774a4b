/**
 * An imported stdio MCP server's process, and the client transport over its
 * stdio. A stdio MCP server is untrusted code: it gets a cleared
 * environment (only the env its config declares, plus `PATH` so the
 * command resolves), its own working folder, and piped stdio. When OS
 * confinement is active it runs confined (`runtime/confine/confine.ts`,
 * the builder sandboxes and scripts use too): its own user, PID and
 * network namespaces (no network of its own: a server whose config names
 * `hosts` reaches them, and only them, through the host's egress proxy,
 * via the relay started in its namespace before it), a private `/tmp`,
 * and it dies with the host. It sees, read-only, what its command line
 * needs (`runtime/confine/installation.ts`: its program as named and its
 * real file, a virtual environment and its base interpreter, a script's
 * package folder and `node_modules`, the files and folders its arguments
 * name), the system folders, the CA certificates and resolver files, its
 * working folder (writable when `writable`), and the entry's `read` and
 * `write` lists; every path goes through the mount rule
 * (`runtime/confine/mount_rule.ts`), and the host's own files are hidden.
 *
 * The official SDK serializes and parses the messages
 * (`serializeMessage`, `deserializeMessage`); the transport splits lines
 * with the project's `LineSplitter` (`protocol/lines.ts`), up to
 * `MAX_MESSAGE_BYTES` (the SDK's `ReadBuffer` copies its whole buffer at
 * every chunk and stops at 10 MiB of its own), and starts the process here
 * instead of by the SDK's own spawner. A server that stops reading its
 * stdin is stopped once 64 MiB of the host's messages wait for it.
 *
 * @module
 */

import {
  deserializeMessage,
  serializeMessage,
} from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { resolve } from "node:path";
import { confineArgs, type ConfinementLayout } from "../confine/confine.ts";
import { commandFiles } from "../confine/installation.ts";
import { checkMount, within } from "../confine/mount_rule.ts";
import { settlesWithin } from "../deadline.ts";
import { EgressBroker } from "../egress/broker.ts";
import { openEgressProxy } from "../egress/proxy.ts";
import { LineSplitter } from "../../protocol/lines.ts";

/**
 * The most bytes one message from an imported server may hold (one line
 * of its stdout); past it the server is stopped.
 */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * The most bytes the host's messages may wait for a server to read its
 * stdin: a server that stops reading (and sends pings meanwhile, each
 * answered) would otherwise have them wait in the host's memory.
 */
const MAX_UNREAD_BYTES = 64 * 1024 * 1024;

/**
 * How to start a stdio MCP server (from `mcp_servers` in the config).
 *
 * @example Run a command in its own folder, with its arguments
 * ```ts
 * import { mcpServerCommand, type McpProcessSpec } from "./imported_process.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.realPath(await Deno.makeTempDir());
 * const spec: McpProcessSpec = {
 *   command: "sh",
 *   args: ["-c", "pwd; echo $GREETING"],
 *   env: { GREETING: "hello" },
 *   cwd: dir,
 * };
 * const child = mcpServerCommand(spec).spawn();
 * await child.stdin.close();
 * const out = new TextDecoder().decode((await child.output()).stdout);
 * assert.equal(out, `${dir}\nhello\n`);
 * await Deno.remove(dir);
 * ```
 */
export interface McpProcessSpec {
  /** The executable. */
  command: string;
  /** Its arguments. @default [] */
  args?: readonly string[];
  /** The only environment variables it sees. @default {} */
  env?: Readonly<Record<string, string>>;
  /**
   * Its working folder. Confined, it is the only host folder it sees (bound
   * read-only unless `writable`). @default the host's (unconfined); none,
   * `/` (confined)
   */
  cwd?: string;
  /** Whether a confined server may write its working folder. @default false */
  writable?: boolean;
  /**
   * More host paths a confined server sees read-only (relative to `cwd`).
   * @default []
   */
  read?: readonly string[];
  /**
   * Host paths a confined server may write (relative to `cwd`): never
   * implied by `args`. @default []
   */
  write?: readonly string[];
  /**
   * Host paths a confined server never sees (the host's config, run
   * history and cache): refused when named, hidden inside any mount.
   * @default []
   */
  protect?: readonly string[];
  /**
   * Hosts a confined server may reach (`name`, `name:port`), only through
   * the egress proxy, which checks them as the broker does. @default []:
   * no network
   */
  hosts?: readonly string[];
  /**
   * The host's egress broker's address check (`EgressBroker.checkTarget`):
   * the address to connect to, or a throw when the target is not allowed.
   * @default a broker that allows no private hosts
   */
  egress?: {
    checkTarget(
      url: URL,
      allow: string[][],
      signal: AbortSignal,
    ): Promise<string>;
  };
}

/** A command to start (a `Deno.Command`, or a confined one with a proxy). */
export interface McpServerCommand {
  /** Starts the process. */
  spawn(): Deno.ChildProcess;
}

/**
 * Builds the command that runs an MCP server.
 *
 * @param spec command, arguments, environment and folder
 * @param layout the confinement layout when confinement is active, else
 * null (the server runs with a cleared environment only)
 * @returns the command, stdio piped, environment cleared
 * @example Unconfined: only the declared environment
 * ```ts
 * import { mcpServerCommand } from "./imported_process.ts";
 * import assert from "node:assert/strict";
 * const child = mcpServerCommand({ command: "env", env: { ONLY: "this" } })
 *   .spawn();
 * await child.stdin.close();
 * const out = new TextDecoder().decode((await child.output()).stdout);
 * assert.match(out, /ONLY=this/);
 * assert.doesNotMatch(out, /HOME=/);
 * ```
 */
export function mcpServerCommand(
  spec: McpProcessSpec,
  layout: ConfinementLayout | null = null,
): McpServerCommand {
  const path = Deno.env.get("PATH");
  const env = {
    ...(path && !spec.env?.PATH ? { PATH: path } : {}),
    ...spec.env,
  };
  if (layout) return { spawn: () => spawnConfined(layout, spec, env) };
  return new Deno.Command(spec.command, {
    args: [...(spec.args ?? [])],
    cwd: spec.cwd,
    clearEnv: true,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  });
}

/**
 * Starts a confined server: its program as named (a virtual environment's
 * interpreter finds its environment from its own path), what its command
 * line needs read-only, its folder and the entry's `read` and `write`
 * lists, each through the mount rule, and its own egress proxy, closed when
 * it exits, when it has hosts.
 */
function spawnConfined(
  layout: ConfinementLayout,
  spec: McpProcessSpec,
  env: Record<string, string>,
): Deno.ChildProcess {
  const folder = spec.cwd === undefined ? undefined : resolve(spec.cwd);
  const rule = { protect: spec.protect ?? [], cwd: folder };
  const files = commandFiles(spec.command, {
    ...rule,
    args: spec.args ?? [],
    path: env.PATH ?? "",
  });
  const named = (by: string) => (p: string) => checkMount(p, { ...rule, by });
  const read = [...files.read, ...(spec.read ?? []).map(named("read"))];
  const write = (spec.write ?? []).map(named("write"));
  if (folder) (spec.writable ? write : read).push(named("cwd")(folder));
  const proxy = (spec.hosts ?? []).length === 0 ? null : openEgressProxy({
    broker: spec.egress ?? new EgressBroker(),
    allow: spec.hosts ?? [],
  });
  try {
    // The Deno binary as named is still Deno (its cache, its libraries).
    const real = Deno.realPathSync(files.program);
    const cmd = confineArgs(layout, {
      program: real === layout.execPath ? real : files.program,
      args: spec.args ?? [],
      grant: {
        // The system folders are bound whole already; and what the entry
        // grants write stays writable: a script or argument inside it is
        // no reason to make part of it read-only.
        read: read.filter((p) =>
          ![...layout.systemDirs, ...write].some((d) => within(p, d))
        ),
        write,
      },
      env,
      cwd: folder,
      egress: proxy ? { socket: proxy.path, token: proxy.token } : undefined,
      systemConfig: true,
      hidden: spec.protect ?? [],
    });
    const child = new Deno.Command(cmd.command, {
      args: cmd.args,
      clearEnv: true,
      env: cmd.env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    if (proxy) child.status.then(proxy.close, proxy.close);
    return child;
  } catch (err) {
    proxy?.close();
    throw err;
  }
}

// How long an exited server's stderr may take to be read to its end.
const STDERR_GRACE_MS = 1000;

// Lines that say where, not what: stack frames (Node's `at`, Python's
// `File "…", line`), the source excerpt and caret under a Node error, a
// traceback header, a file:line location, lone braces of an error's
// properties, Node's version banner.
const NOISE = [
  /^at\s/,
  /^File ".*", line \d+/,
  /^Traceback \(most recent call last\):$/,
  /^\^+$/,
  /^[{}\[\](),;]+$/,
  /^Node\.js v\d+/,
  /^(node:)?[\w./@:-]+:\d+(:\d+)?$/,
  /^\w+: '.*',?$/, // `code: 'MODULE_NOT_FOUND',` inside the braces
  /^requireStack: \[/,
];
const ERRORISH =
  /error|exception|cannot|can't|could not|denied|not found|no such|fatal|failed|refused|EACCES|EROFS|ENOENT|EPERM/i;

/**
 * The first meaningful error line of a server's stderr: the first line
 * that reads as an error (`Error: Cannot find module '/x'`,
 * `ModuleNotFoundError: No module named 'y'`), else the first line that
 * is not noise; blank lines, stack frames, indented source excerpts,
 * carets, lone braces and Node's version banner are skipped.
 *
 * @param stderr what the server wrote
 * @returns the line, trimmed, or null when there is none
 * @example Node's and Python's start errors
 * ```ts
 * import { firstErrorLine } from "./imported_process.ts";
 * import assert from "node:assert/strict";
 * const node = "node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\n" +
 *   "Error: Cannot find module '/x'\n    at Module._resolveFilename (node:internal)\n" +
 *   "{\n  code: 'MODULE_NOT_FOUND',\n}\n\nNode.js v20.20.2\n";
 * assert.equal(firstErrorLine(node), "Error: Cannot find module '/x'");
 * const py = 'Traceback (most recent call last):\n  File "/s.py", line 1, in <module>\n' +
 *   "    import y\nModuleNotFoundError: No module named 'y'\n";
 * assert.equal(firstErrorLine(py), "ModuleNotFoundError: No module named 'y'");
 * assert.equal(firstErrorLine("\n}\n\nNode.js v20.1.0\n"), null);
 * ```
 */
export function firstErrorLine(stderr: string): string | null {
  const lines = stderr.split(/\r?\n/).filter((line) => {
    const t = line.trim();
    // An indented line is a frame, an excerpt or an error's property.
    return t !== "" && !/^\s/.test(line) && !NOISE.some((re) => re.test(t));
  }).map((line) => line.trim().slice(0, 300));
  return lines.find((l) => ERRORISH.test(l)) ?? lines[0] ?? null;
}

/**
 * A transport that runs a stdio MCP server.
 *
 * @example Connect an SDK client to a server process
 * ```ts ignore
 * const client = new Client({ name: "skillbox", version: "1" });
 * await client.connect(new ProcessClientTransport({ command: "my-server" }));
 * ```
 */
export class ProcessClientTransport implements Transport {
  /** Called when the process exits or the transport closes. */
  onclose?: () => void;
  /** Called on a framing or pipe error. */
  onerror?: (error: Error) => void;
  /** Called with each message from the server. */
  onmessage?: (message: JSONRPCMessage) => void;
  /** The last lines the server wrote to stderr (for the failure reason). */
  stderrTail = "";
  /** The first lines the server wrote to stderr (up to 4000 characters). */
  stderrHead = "";
  /** Why the host stopped the server ("" unless it did). */
  fault = "";

  #spec: McpProcessSpec;
  #layout: ConfinementLayout | null;
  #child: Deno.ChildProcess | null = null;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  // Bytes sent and not yet taken by the server's stdin.
  #unread = 0;
  #closed = false;

  /**
   * @param spec what to run
   * @param layout the confinement layout, or null to run unconfined
   */
  constructor(spec: McpProcessSpec, layout: ConfinementLayout | null = null) {
    this.#spec = spec;
    this.#layout = layout;
  }

  /** Starts the process. */
  start(): Promise<void> {
    const child = mcpServerCommand(this.#spec, this.#layout).spawn();
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    // Not streaming: it holds no state between the lines and chunks.
    const decoder = new TextDecoder();
    const lines: Uint8Array[] = [];
    // A server that never ends its line would hold the host's memory: the
    // splitter holds none of a line past the bound, and the server stops.
    let over = false;
    const splitter = new LineSplitter((line) => lines.push(line), {
      maxLineBytes: MAX_MESSAGE_BYTES,
      onOversize: () => over = true,
    });
    const stdout = this.#pump(child.stdout, async (chunk) => {
      splitter.push(chunk);
      for (const line of lines.splice(0)) {
        const json = decoder.decode(line).replace(/\r$/, "");
        if (json === "") continue;
        let message: JSONRPCMessage;
        try {
          message = deserializeMessage(json);
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        this.onmessage?.(message);
        // The SDK handles a notification a microtask later but a response
        // at once: yield, so a progress notification is not overtaken by
        // the result that followed it in the same chunk.
        await new Promise<void>((resolve) => queueMicrotask(resolve));
        await Promise.resolve();
      }
      if (over || splitter.overflowing) this.#overflowed();
    });
    const stderrRead = this.#pump(child.stderr, (chunk) => {
      const text = decoder.decode(chunk);
      this.stderrTail = (this.stderrTail + text).slice(-2000);
      if (this.stderrHead.length < 4000) {
        this.stderrHead = (this.stderrHead + text).slice(0, 4000);
      }
    });
    // Closed once its stderr is read too, so the reason holds what it
    // wrote; bounded, as a process it started may keep the pipe open.
    child.status.then(async () => {
      await settlesWithin(stderrRead, STDERR_GRACE_MS);
      this.#finish();
    });
    // Reading its stdout stopped (a message over the bound): a server no
    // longer read is stopped, not left running deaf.
    stdout.then(() => {
      if (!this.#closed && this.fault !== "") this.close();
    });
    return Promise.resolve();
  }

  // A message past the bound: says why and throws, which ends the read
  // loop (and so the server).
  #overflowed(): never {
    this.fault =
      `The MCP server wrote a message over ${MAX_MESSAGE_BYTES} bytes: stopped it`;
    this.onerror?.(new Error(this.fault));
    throw new Error(this.fault);
  }

  /**
   * The first meaningful error line the server wrote to stderr
   * ({@link firstErrorLine}), or "" when it wrote none.
   */
  get stderrError(): string {
    return firstErrorLine(this.stderrHead) ??
      firstErrorLine(this.stderrTail) ?? "";
  }

  /** Writes one message to the server's stdin. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#closed) {
      throw new Error("Cannot send: the MCP server process is not running");
    }
    const bytes = new TextEncoder().encode(serializeMessage(message));
    this.#unread += bytes.length;
    if (this.#unread > MAX_UNREAD_BYTES) {
      this.fault =
        `The MCP server stopped reading its stdin: over ${MAX_UNREAD_BYTES} bytes were waiting for it: stopped it`;
      this.onerror?.(new Error(this.fault));
      await this.close();
      throw new Error(this.fault);
    }
    try {
      await this.#writer.write(bytes);
    } finally {
      this.#unread -= bytes.length;
    }
  }

  /** Kills the process. */
  close(): Promise<void> {
    try {
      this.#child?.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    this.#finish();
    return Promise.resolve();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#writer?.close().catch(() => {});
    this.onclose?.();
  }

  async #pump(
    stream: ReadableStream<Uint8Array>,
    onChunk: (chunk: Uint8Array) => void | Promise<void>,
  ): Promise<void> {
    try {
      for await (const chunk of stream) await onChunk(chunk);
    } catch {
      // The process is gone; status settles and closes the transport.
    }
  }
}
