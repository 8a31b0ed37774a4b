/**
 * The CLI behind `deno run host` (which runs the `host` task): parses flags,
 * loads `skillbox.jsonc`, then serves with {@link createHost}. Run with
 * `--help` for the flags.
 *
 * @module
 */

import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { ConfigError } from "./runtime/config_error.ts";
import { defaultConfig, loadConfig } from "./runtime/config.ts";
import type { HostConfig } from "./runtime/config_schema.ts";
import {
  parsePort,
  resolveConfig,
  type ResolvedConfig,
} from "./runtime/config_overrides.ts";
import { createHost, type Host } from "./runtime/host.ts";
import { LogLines } from "./runtime/log_lines.ts";
import { withoutPassword } from "./runtime/store/config.ts";

const USAGE = `Usage: deno run host [options]

Serves A2E v1.0 over WebSocket (/a2e), HTTP+SSE (/a2e/session, /a2e/send,
/a2e/stream) and MCP over Streamable HTTP (/mcp); with --stdio, A2E over
stdin/stdout instead; with --mcp, MCP over stdin/stdout instead.

Options:
  --hostname HOST   address to listen on (default 127.0.0.1)
  --port PORT       port to listen on, 0 for any free port (default 8787)
  --skills DIR      a skills directory; repeatable (default ./skills)
  --config FILE     config file (default ./skillbox.jsonc when present)
  --token T         accepted auth token; repeatable (default: no auth)
  --stdio           serve one session over stdin/stdout NDJSON instead
  --mcp             serve one MCP session over stdin/stdout instead
  --help            show this help

Precedence: flags, then SKILLBOX_CONFIG, SKILLBOX_HOSTNAME, SKILLBOX_PORT,
SKILLBOX_TOKENS (comma-separated), then the config file, then defaults.
`;

// Log lines go to stderr in the background: a reader that stops reading
// must not stop the host (see runtime/log_lines.ts).
const stderr = new LogLines(Deno.stderr);

type Flags = ReturnType<typeof parseFlags>;

/**
 * The flags, as `parseArgs` reads them: strict by default, so it throws on
 * an unknown flag or a positional argument.
 */
function parseFlags(args: string[]) {
  return parseArgs({
    args,
    options: {
      hostname: { type: "string" },
      port: { type: "string" },
      skills: { type: "string", multiple: true },
      config: { type: "string" },
      token: { type: "string", multiple: true },
      stdio: { type: "boolean" },
      mcp: { type: "boolean" },
      help: { type: "boolean" },
    },
  }).values;
}

/**
 * The configuration from flags, environment, the config file and defaults.
 *
 * @returns the resolved configuration, or 1 after printing a config error
 */
async function resolveSettings(
  flags: Flags,
): Promise<ResolvedConfig | number> {
  try {
    const env = Deno.env.toObject();
    const file = flags.config ?? env.SKILLBOX_CONFIG ??
      (existsSync("skillbox.jsonc") ? "skillbox.jsonc" : undefined);
    const fromFile = file ? await loadConfig(file) : defaultConfig();
    const resolved = resolveConfig(fromFile, {
      env,
      flags: {
        hostname: flags.hostname,
        port: flags.port === undefined
          ? undefined
          : parsePort(flags.port, "--port"),
        skills: flags.skills,
        tokens: flags.token,
      },
    });
    if (file) resolved.overrides.config = file;
    return resolved;
  } catch (error) {
    if (error instanceof ConfigError) {
      stderr.log(`skillbox: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

/** What the startup lines say about the loaded skills. */
interface Loaded {
  /** The summary: counts, folders, failures, warnings, auth. */
  summary: string;
  /** The skill warnings, one line each. */
  warnings: string[];
}

/**
 * Waits for the host's first load.
 *
 * @returns its summary, or null after printing why it failed
 */
async function awaitLoad(
  host: Host,
  config: HostConfig,
): Promise<Loaded | null> {
  try {
    const report = await host.ready;
    const starting = host.mcpServers.starting();
    const parts = [
      `${report.tools} tools, ${report.toolkits} toolkits, ${report.skills} skills from ${
        report.dirs.join(", ")
      }`,
    ];
    if (report.errors.length > 0) {
      parts.push(`${report.errors.length} file(s) failed to load (see above)`);
    }
    if (report.warnings.length > 0) {
      parts.push(`${report.warnings.length} skill warning(s) below`);
    }
    // The host does not wait for them: their tools join when ready.
    if (starting.length > 0) {
      parts.push(`MCP servers still starting: ${starting.join(", ")}`);
    }
    const tokens = config.tokens.length;
    parts.push(`auth: ${tokens > 0 ? `${tokens} token(s)` : "off"}`);
    return { summary: parts.join("; "), warnings: report.warnings };
  } catch (error) {
    stderr.log(`skillbox: cannot load skills: ${(error as Error).message}`);
    await host.close({ timeoutSeconds: 0 });
    return null;
  }
}

/**
 * Listens on the network until SIGINT or SIGTERM, then closes the host.
 *
 * @returns the exit code
 */
async function serveNetwork(
  host: Host,
  config: HostConfig,
  banner: (serving: string) => void,
): Promise<number> {
  let address;
  try {
    address = await host.listen();
  } catch (error) {
    stderr.log(
      `skillbox: cannot listen on ${config.listen.hostname}:${config.listen.port}: ${
        (error as Error).message
      }`,
    );
    return 1;
  }
  const ws = address.url.replace(/^http/, "ws");
  banner(
    `listening: ${ws}/a2e (WebSocket), ${address.url}/a2e (HTTP+SSE), ${address.url}/mcp (MCP), ${address.url}/health`,
  );
  stderr.log(
    consoleLine(address.url, config.tokens.length > 0, address.hostname),
  );
  stderr.log(doorsLine(config));
  stderr.log(historyLine(config.store));

  const stopped = Promise.withResolvers<void>();
  const stop = () => stopped.resolve();
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  await stopped.promise;
  stderr.log("skillbox shutting down");
  await host.close();
  return 0;
}

/**
 * Runs the CLI.
 *
 * @param args the command-line arguments
 * @returns the exit code once the host stops (or at once for errors)
 */
async function main(args: string[]): Promise<number> {
  let flags: Flags;
  try {
    flags = parseFlags(args);
  } catch (error) {
    stderr.log(`skillbox: ${(error as Error).message} (see --help)`);
    return 2;
  }
  if (flags.help) {
    Deno.stderr.writeSync(new TextEncoder().encode(USAGE));
    return 0;
  }
  const resolved = await resolveSettings(flags);
  if (typeof resolved === "number") return resolved;
  const { config, overrides } = resolved;
  const host = createHost({
    config,
    configPath: overrides.config,
    log: (line) => stderr.log(`skillbox: ${line}`),
  });
  const loaded = await awaitLoad(host, config);
  if (loaded === null) return 1;
  // What is served and the load summary, where settings came from, then
  // each skill warning.
  const banner = (serving: string) => {
    stderr.log(`skillbox ${serving} (${loaded.summary})`);
    const from = Object.entries(overrides).map(([k, v]) => `${k} from ${v}`);
    if (from.length > 0) stderr.log(`skillbox settings: ${from.join(", ")}`);
    for (const line of loaded.warnings) stderr.log(`skillbox warning: ${line}`);
  };
  if (flags.mcp || flags.stdio) {
    banner(`serving one ${flags.mcp ? "MCP" : "A2E"} session on stdio`);
    await (flags.mcp ? host.serveMcpStdio() : host.serveStdio());
    await host.close({ timeoutSeconds: 0 });
    return 0;
  }
  return await serveNetwork(host, config, banner);
}

// Where the console is, and whether anyone reaching it may read it.
function consoleLine(url: string, tokens: boolean, hostname: string): string {
  if (tokens) return `console: ${url}/ (sign in with a token)`;
  const loopback = hostname === "127.0.0.1" || hostname === "::1" ||
    hostname === "localhost";
  return `console: ${url}/ (open: no tokens configured${
    loopback
      ? ", loopback: any local process may use it"
      : `; WARNING: reachable on ${hostname}`
  })`;
}

// Where the runs are kept.
function historyLine(store: HostConfig["store"]): string {
  if (!store) return "history: off (store: null)";
  if (!store.url) return `history: ${store.path} (store.path)`;
  const shown = withoutPassword(store.url);
  return `history: PostgreSQL ${shown} (store.url, shared with the fleet)`;
}

// What keeps web pages out, and guessers when there are tokens.
function doorsLine(config: HostConfig): string {
  const listed = config.listen.allowedHosts.length +
        config.listen.allowedOrigins.length > 0
    ? " or listen.allowed_hosts/allowed_origins"
    : "";
  return `doors: web pages and DNS rebinding are refused (Host must be 127.0.0.1, localhost, [::1] or the listen address, Origin this host's${listed})${
    config.tokens.length > 0 ? "; wrong tokens are throttled per address" : ""
  }`;
}

if (import.meta.main) {
  // Said here: the store holds its driver's errors that no caller can
  // catch (runtime/store/postgres.ts), so one thrown at start (a URL it
  // cannot read) ended the process with 0 and no word.
  const code = await main(Deno.args).catch((error: unknown) => {
    const why = error instanceof Error ? error.message : String(error);
    stderr.log(`skillbox: cannot start: ${withoutPassword(why)}`);
    return 1;
  });
  // The last lines, unless stderr stays unread (then they go with the
  // process).
  await stderr.written(2000);
  Deno.exit(code);
}
