/**
 * A confined command's way out: started in the command's network namespace
 * in its place, it starts the egress relay, then the command itself
 * (stdio, environment and exit code passed straight through), so that a
 * binary that is not Deno (an MCP server, a Python script) reaches the
 * network only through the host's egress proxy, via `HTTP_PROXY`.
 *
 * Arguments: the relay token argument, `--`, the command and its
 * arguments.
 *
 * @module
 */

import { relayToken } from "../../protocol/egress_relay.ts";
import { startEgressRelay } from "./egress_relay.ts";

const dash = Deno.args.indexOf("--");
const token = relayToken(Deno.args.slice(0, Math.max(0, dash)));
const [command, ...args] = dash < 0 ? [] : Deno.args.slice(dash + 1);
if (token === null || command === undefined) {
  Deno.stderr.writeSync(
    new TextEncoder().encode(
      "relay_main: usage: <token arg> -- <command> [args...]\n",
    ),
  );
  Deno.exit(2);
}
startEgressRelay({ token });
const child = new Deno.Command(command, {
  args,
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
}).spawn();
// Deno reports a death by signal as 128 + its number, as a shell does.
Deno.exit((await child.status).code);
