/**
 * How the code toolkit evaluates the client's code: in place inside the
 * sandbox, or in a throwaway worker elsewhere. The program that runs the code
 * is written as a function so it is type-checked and linted, and shipped to
 * the worker as source text (`evaluatorSource`), because a module may not
 * import anything at runtime beyond its own folder.
 *
 * Protocol with a worker: the parent posts `{ code }`; the worker posts
 * `{ type: "console", level, text }` while the code runs, then one
 * `{ type: "result", ... }`.
 *
 * @module
 */

/** A console line the evaluated code printed. */
export interface ConsoleLine {
  level: "log" | "info" | "debug" | "warn" | "error";
  text: string;
}

/** What the evaluator reports when the code finished. */
export interface EvalResult {
  /** The value as JSON, or null when it is not JSON-serializable. */
  value: unknown;
  /** `Deno.inspect` of the value (strings as is), capped. */
  display: string;
  value_type: string;
  /** `Name: message` when the code threw (or failed to compile). */
  error: string | null;
}

/** What a worker evaluator posts: console lines, then its result. */
type EvalMessage =
  | (EvalResult & { type: "result" })
  | (ConsoleLine & { type: "console" });

/**
 * Prepares this global scope for client code (its console reports to
 * `onConsole`) and returns the function that evaluates it. The worker runs
 * its source text, so it must not reference anything outside its body.
 */
function evaluatorMain(
  onConsole: (line: ConsoleLine) => void,
): (code: string) => Promise<EvalResult> {
  // Long: kept in one function because the worker runs its source text
  // (`evaluatorSource`, from `toString()`), so it can reference nothing
  // outside its body; each job in it is a short named inner arrow.
  const MAX_CONSOLE_CHARS = 100_000;
  const MAX_DISPLAY_CHARS = 20_000;
  const MAX_VALUE_CHARS = 200_000;
  const inspect = (v: unknown) =>
    Deno.inspect(v, { depth: 6, colors: false, iterableLimit: 200 });
  const clip = (s: string, n: number) =>
    s.length > n ? s.slice(0, n) + `… (${s.length - n} more chars)` : s;

  let consoleChars = 0;
  const print = (level: ConsoleLine["level"], args: unknown[]) => {
    if (consoleChars > MAX_CONSOLE_CHARS) return;
    let text = args.map((a) => typeof a === "string" ? a : inspect(a)).join(
      " ",
    );
    consoleChars += text.length;
    if (consoleChars > MAX_CONSOLE_CHARS) {
      text = clip(text, 200) + " [console output capped]";
    }
    onConsole({ level, text });
  };
  // The evaluated code sees a console that reports to the tool, not stdout.
  const sink: Record<string, ConsoleLine["level"]> = {
    log: "log",
    info: "info",
    debug: "debug",
    trace: "debug",
    dir: "log",
    table: "log",
    warn: "warn",
    error: "error",
    assert: "error",
  };
  const cons =
    (globalThis as unknown as Record<string, Record<string, unknown>>)[
      "con" + "sole"
    ]!;
  for (const [method, level] of Object.entries(sink)) {
    cons[method] = method === "assert"
      ? (ok: unknown, ...rest: unknown[]) => {
        if (!ok) print(level, ["Assertion failed:", ...rest]);
      }
      : (...args: unknown[]) => print(level, args);
  }
  // A stray rejection must not kill the worker before it reports.
  globalThis.addEventListener("unhandledrejection", (e) => {
    e.preventDefault();
    print("error", ["Unhandled promise rejection:", e.reason]);
  });

  const toUrl = (src: string) =>
    "data:application/typescript;base64," +
    new TextEncoder().encode(src).toBase64();
  // deno-lint-ignore no-explicit-any
  type AnyFn = new (...a: string[]) => (...a: any[]) => any;
  const AsyncFunction = (async () => {}).constructor as AnyFn;
  const compiles = (ctor: AnyFn, src: string) => {
    try {
      new ctor(src);
      return true;
    } catch {
      return false;
    }
  };

  /**
   * Turns a script body into an async function body that returns its last
   * expression: the shortest tail of lines that compiles as `return (...)`.
   * Script eval gives the completion value for free, but cannot `await`.
   */
  const withReturn = (body: string) => {
    const lines = body.trimEnd().split("\n");
    for (let k = 1; k <= Math.min(lines.length, 40); k++) {
      const tail = lines.slice(-k).join("\n").trim().replace(/;$/, "");
      if (tail === "") continue;
      const candidate = `${lines.slice(0, -k).join("\n")}\nreturn (${tail}\n);`;
      if (compiles(AsyncFunction, candidate)) return candidate;
    }
    return body;
  };

  const evaluate = async (code: string) => {
    // import/export statements need a real module; its value is the default
    // export.
    if (/^\s*(import\s*[\w*{"']|export\s)/m.test(code)) {
      const mod = await import(toUrl(code));
      return "default" in mod ? await mod.default : undefined;
    }
    // Deno strips the types when it loads a TypeScript module; the function's
    // source text then is the code as plain JavaScript.
    const wrapped = await import(
      toUrl(`export default async function () {\n${code}\n}`)
    );
    const src = String(wrapped.default);
    const body = src.slice(src.indexOf("{") + 1, src.lastIndexOf("}"));
    const indirectEval = eval;
    if (compiles(Function as unknown as AnyFn, body)) {
      try {
        return await indirectEval(body);
      } catch (err) {
        // Only a top-level `return` fails to parse here; nothing ran yet.
        if (
          !(err instanceof SyntaxError && /Illegal return/.test(err.message))
        ) throw err;
      }
    }
    return await new AsyncFunction(withReturn(body))();
  };

  const typeName = (v: unknown) =>
    v === null
      ? "null"
      : Array.isArray(v)
      ? "array"
      : typeof v === "object"
      ? (Object.getPrototypeOf(v)?.constructor?.name ?? "object")
      : typeof v;

  // The code chose what it threw: its message may refuse String(), its
  // name be a throwing getter. Unreported, the call would wait for its
  // timeout.
  const describeError = (err: unknown) => {
    try {
      return err instanceof Error
        ? `${err.name}: ${err.message}`.replace(
          /data:application\/typescript;base64,[A-Za-z0-9+/=]+/g,
          "<code>",
        )
        : `Uncaught ${inspect(err)}`;
    } catch {
      return "Uncaught exception that cannot be shown as text";
    }
  };

  return async (code) => {
    try {
      const value = await evaluate(code);
      let json: unknown = null;
      try {
        const s = JSON.stringify(value);
        if (s !== undefined && s.length <= MAX_VALUE_CHARS) {
          json = JSON.parse(s);
        }
      } catch { /* not serializable: display still shows it */ }
      return {
        value: json,
        display: clip(
          typeof value === "string" ? value : inspect(value),
          MAX_DISPLAY_CHARS,
        ),
        value_type: typeName(value),
        error: null,
      };
    } catch (err) {
      return {
        value: null,
        display: "",
        value_type: "undefined",
        error: describeError(err),
      };
    }
  };
}

/** Deno's permission names, all given up before client code runs in place. */
const PERMISSION_NAMES = [
  "read",
  "write",
  "net",
  "env",
  "run",
  "sys",
  "ffi",
] as const;

/**
 * Inside the skillbox sandbox a `runs_client_code` tool already runs in a
 * fresh worker of its own (`isolation: "per-call"`) with `Worker` removed:
 * evaluate right here, after giving up the last permission it holds
 * (reading its own folder), so the code gets none at all. `globals` are
 * defined on the global scope first (`run_code`'s `tools` and `skills`).
 *
 * @param code the client's code
 * @param options where console lines go, the call's signal, the globals
 * @returns what the evaluator reported
 * @example Only in a sandbox worker: it revokes every permission
 * ```ts ignore
 * const out = await evaluateInPlace("1 + 1", { onConsole() {}, signal });
 * ```
 */
export async function evaluateInPlace(
  code: string,
  options: {
    onConsole: (line: ConsoleLine) => void;
    signal: AbortSignal;
    globals?: Record<string, unknown>;
  },
): Promise<EvalResult> {
  const { onConsole, signal } = options;
  for (const name of PERMISSION_NAMES) {
    await Deno.permissions.revoke({ name });
  }
  for (const [name, value] of Object.entries(options.globals ?? {})) {
    Object.defineProperty(globalThis, name, {
      value,
      writable: false,
      configurable: false,
    });
  }
  return await new Promise<EvalResult>((resolve, reject) => {
    signal.addEventListener(
      "abort",
      () => reject(signal.reason ?? new Error("The call was aborted")),
      { once: true },
    );
    evaluatorMain(onConsole)(code).then(resolve, reject);
  });
}

/**
 * The worker's source: {@link evaluatorMain}, transpiled, posting console
 * lines as they come and the result of the code the parent posts.
 */
const evaluatorSource = `const evaluate = (${evaluatorMain.toString()})(
  (line) => postMessage({ type: "console", ...line }),
);
onmessage = async (e) =>
  postMessage({ type: "result", ...await evaluate(e.data.code) });`;

/**
 * Outside the skillbox sandbox (tests, embedding): evaluates in a throwaway
 * worker with no permissions.
 *
 * @param code the client's code
 * @param options where console lines go, and the call's signal
 * @returns what the evaluator reported
 * @example Needs --unstable-worker-options where the caller holds permissions
 * ```ts ignore
 * const out = await evaluateInWorker("1 + 1", { onConsole() {}, signal });
 * ```
 */
export async function evaluateInWorker(
  code: string,
  options: { onConsole: (line: ConsoleLine) => void; signal: AbortSignal },
): Promise<EvalResult> {
  const { onConsole, signal } = options;
  const worker = new Worker(
    "data:application/javascript;base64," +
      new TextEncoder().encode(evaluatorSource).toBase64(),
    workerOptions(),
  );
  let onAbort = () => {};
  try {
    return await new Promise<EvalResult>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<EvalMessage>) => {
        const msg = e.data;
        if (msg.type === "console") onConsole(msg);
        else resolve(msg);
      };
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(`The code crashed its sandbox: ${e.message}`));
      };
      // A value nested deeper than this thread can copy back comes as
      // this, not as a message: unheard, the call waits for its signal.
      worker.onmessageerror = () => {
        reject(
          new Error(
            "The code's result cannot be read back: it is nested too deep to copy",
          ),
        );
      };
      onAbort = () =>
        reject(signal.reason ?? new Error("The call was aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
      worker.postMessage({ code });
    });
  } finally {
    signal.removeEventListener("abort", onAbort);
    // A busy loop survives terminate(); the sandbox process is killed at
    // the call's timeout, which is why this tool is isolated per call.
    worker.terminate();
  }
}

/**
 * Options for the evaluator worker. A worker inherits its parent's
 * permissions; in the skillbox sandbox this toolkit is granted none, so
 * inheriting is already "none". Where the caller holds permissions (tests,
 * embedding), they are dropped with `deno.permissions: "none"`, which needs
 * `--unstable-worker-options`; without it, refuse rather than leak them.
 */
function workerOptions(): WorkerOptions {
  const holds = PERMISSION_NAMES.some((name) =>
    Deno.permissions.querySync({ name }).state === "granted"
  );
  if (!holds) return { type: "module" };
  if (!workerOptionsEnabled()) {
    throw new Error(
      "eval_typescript runs code with no permissions: run it in the skillbox sandbox, or start Deno with --unstable-worker-options",
    );
  }
  return { type: "module", deno: { permissions: "none" } } as WorkerOptions;
}

function workerOptionsEnabled(): boolean {
  try {
    const argv = Deno.readTextFileSync("/proc/self/cmdline").split("\0");
    return argv.some((a) =>
      a === "--unstable-worker-options" || a === "--unstable"
    );
  } catch {
    return false;
  }
}

/**
 * The input schema of both code tools: the code, and nothing else.
 *
 * @param description what the tool tells the model about its code
 * @returns the JSON Schema
 */
export function codeInput(description: string): Record<string, unknown> {
  return {
    type: "object",
    properties: { code: { type: "string", description } },
    required: ["code"],
    additionalProperties: false,
  };
}

/** The `console` output field of both code tools: the lines printed. */
export const CONSOLE_OUTPUT = {
  type: "array",
  description: "Console lines with `level` and `text`",
  items: {
    type: "object",
    properties: { level: { type: "string" }, text: { type: "string" } },
  },
};

/** The `error` output field of both code tools. */
export const ERROR_OUTPUT = {
  type: ["string", "null"],
  description: "The exception, when the code threw",
};

/**
 * Starts a code tool's call: checks that it is not already cancelled, and
 * keeps the console lines the snippet prints for the result
 * while relaying them as the call's log events as they come.
 *
 * @param ctx the call's `signal` and `log`
 * @returns the lines so far and the listener that records them
 * @example
 * ```ts
 * import { beginCall } from "./_evaluator.ts";
 * import assert from "node:assert/strict";
 * const logged: string[] = [];
 * const relay = beginCall({
 *   signal: new AbortController().signal,
 *   log: (level, text) => logged.push(`${level} ${text}`),
 * });
 * relay.onConsole({ level: "log", text: "hi" });
 * assert.deepEqual(relay.lines, [{ level: "log", text: "hi" }]);
 * assert.deepEqual(logged, ["info hi"]);
 * ```
 */
export function beginCall(
  ctx: {
    signal: AbortSignal;
    log: (level: "info" | "debug" | "warn" | "error", text: string) => void;
  },
): { lines: ConsoleLine[]; onConsole: (line: ConsoleLine) => void } {
  ctx.signal.throwIfAborted();
  const lines: ConsoleLine[] = [];
  return {
    lines,
    onConsole: (line) => {
      lines.push({ level: line.level, text: line.text });
      ctx.log(line.level === "log" ? "info" : line.level, line.text);
    },
  };
}
