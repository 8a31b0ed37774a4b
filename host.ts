/**
 * The CLI behind `deno run host` (which runs the `host` task): parses flags,
 * loads `skillbox.jsonc`, then serves with {@link createHost}. Run with
 * `--help` for the flags.
 *
 * @module
 */

import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  ConfigError,
  defaultConfig,
  loadConfig,
  parsePort,
  resolveConfig,
} from "./runtime/config.ts";
import { createHost } from "./runtime/host.ts";

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

function stderr(line: string): void {
  Deno.stderr.writeSync(new TextEncoder().encode(line + "\n"));
}

/**
 * Runs the CLI.
 *
 * @param args the command-line arguments
 * @returns the exit code once the host stops (or at once for errors)
 */
async function main(args: string[]): Promise<number> {
  let flags;
  try {
    flags = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
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
  } catch (error) {
    stderr(`skillbox: ${(error as Error).message} (see --help)`);
    return 2;
  }
  if (flags.help) {
    Deno.stderr.writeSync(new TextEncoder().encode(USAGE));
    return 0;
  }

  let resolved;
  try {
    const env = Deno.env.toObject();
    const file = flags.config ?? env.SKILLBOX_CONFIG ??
      (existsSync("skillbox.jsonc") ? "skillbox.jsonc" : undefined);
    const fromFile = file ? await loadConfig(file) : defaultConfig();
    resolved = resolveConfig(fromFile, {
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
  } catch (error) {
    if (error instanceof ConfigError) {
      stderr(`skillbox: ${error.message}`);
      return 1;
    }
    throw error;
  }
  const { config, overrides } = resolved;
  const host = createHost({
    config,
    configPath: overrides.config,
    log: (line) => stderr(`skillbox: ${line}`),
  });
  let loaded: string;
  let warnings: string[] = [];
  try {
    const report = await host.ready;
    warnings = report.warnings;
    loaded =
      `${report.tools} tools, ${report.toolkits} toolkits, ${report.skills} skills from ${
        report.dirs.join(", ")
      }${
        report.errors.length > 0
          ? `; ${report.errors.length} file(s) failed to load (see above)`
          : ""
      }${
        warnings.length > 0 ? `; ${warnings.length} skill warning(s) below` : ""
      }; auth: ${
        config.tokens.length > 0 ? `${config.tokens.length} token(s)` : "off"
      }`;
  } catch (error) {
    stderr(`skillbox: cannot load skills: ${(error as Error).message}`);
    await host.close({ timeoutSeconds: 0 });
    return 1;
  }
  const from = Object.entries(overrides).map(([k, v]) => `${k} from ${v}`)
    .join(", ");

  if (flags.mcp) {
    stderr(`skillbox serving one MCP session on stdio (${loaded})`);
    if (from) stderr(`skillbox settings: ${from}`);
    await host.serveMcpStdio();
    await host.close({ timeoutSeconds: 0 });
    return 0;
  }

  if (flags.stdio) {
    stderr(`skillbox serving one A2E session on stdio (${loaded})`);
    if (from) stderr(`skillbox settings: ${from}`);
    for (const line of warnings) stderr(`skillbox warning: ${line}`);
    await host.serveStdio();
    await host.close({ timeoutSeconds: 0 });
    return 0;
  }

  let address;
  try {
    address = await host.listen();
  } catch (error) {
    stderr(
      `skillbox: cannot listen on ${config.listen.hostname}:${config.listen.port}: ${
        (error as Error).message
      }`,
    );
    return 1;
  }
  const ws = address.url.replace(/^http/, "ws");
  stderr(
    `skillbox listening: ${ws}/a2e (WebSocket), ${address.url}/a2e (HTTP+SSE), ${address.url}/mcp (MCP), ${address.url}/health (${loaded})`,
  );
  if (from) stderr(`skillbox settings: ${from}`);
  for (const line of warnings) stderr(`skillbox warning: ${line}`);
  stderr(consoleLine(address.url, config.tokens.length > 0, address.hostname));
  stderr(
    `history: ${
      config.store ? `${config.store.path} (store.path)` : "off (store: null)"
    }`,
  );

  const stopped = Promise.withResolvers<void>();
  const stop = () => stopped.resolve();
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  await stopped.promise;
  stderr("skillbox shutting down");
  await host.close();
  return 0;
}

// Where the console is, and whether anyone reaching it may read it.
function consoleLine(url: string, tokens: boolean, hostname: string): string {
  if (tokens) return `console: ${url}/ (sign in with a token)`;
  const loopback = hostname === "127.0.0.1" || hostname === "::1" ||
    hostname === "localhost";
  return `console: ${url}/ (open: no tokens configured${
    loopback ? ", loopback only" : `; WARNING: reachable on ${hostname}`
  })`;
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
