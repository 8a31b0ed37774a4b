/**
 * Routes the tool caller's sandbox calls: a tool whose module path names an
 * imported MCP server (`/mcp:/<name>`) is called on that server; every other
 * call goes to the real sandbox. The tool caller stays the one call path.
 *
 * @module
 */

import type { Sandbox } from "../sandbox/types.ts";
import { CallSignal } from "../deadline.ts";
import type { ImportedServers } from "./imported.ts";
import { MCP_PATH_PREFIX } from "./server_module.ts";

/**
 * Wraps a sandbox so imported MCP tools reach their server.
 *
 * @param sandbox the real sandbox
 * @param servers the imported servers
 * @returns what the tool caller needs of a sandbox
 * @example A call to an imported server that does not exist fails
 * ```ts
 * import { routeImported } from "./route_imported.ts";
 * import { createImportedServers } from "./imported.ts";
 * import assert from "node:assert/strict";
 * const servers = createImportedServers({ servers: {} });
 * const routed = routeImported({
 *   call: () => Promise.resolve({ ok: true, value: "sandbox", truncated: false }),
 *   resolvePermissions: () => Promise.resolve({}),
 * }, servers);
 * const call = { path: "/mcp:/none", export: "t", version: "", args: {}, grant: {},
 *   timeoutMs: 100, sessionId: "s", callId: "c", config: {}, metadata: {}, isolation: "warm" as const };
 * assert.equal((await routed.call(call, { onEvent() {}, callTool: () => Promise.reject(), chat: () => Promise.reject() })).ok, false);
 * ```
 */
export function routeImported(
  sandbox: Pick<Sandbox, "call" | "resolvePermissions">,
  servers: ImportedServers,
): Pick<Sandbox, "call" | "resolvePermissions"> {
  return {
    call(call, hooks) {
      if (!call.path.startsWith(MCP_PATH_PREFIX)) {
        return sandbox.call(call, hooks);
      }
      // The SDK keeps a listener on the signal it is given for good: give
      // it one of this call's own, not the session's (CallSignal).
      const follower = hooks.signal ? new CallSignal(hooks.signal) : undefined;
      return servers.call(
        call.path.slice(MCP_PATH_PREFIX.length),
        call.export,
        call.args,
        {
          timeoutMs: call.timeoutMs,
          signal: follower?.signal,
          onEvent: (kind, data) => hooks.onEvent(kind, data),
        },
      ).finally(() => follower?.release());
    },
    resolvePermissions: (path, exportName, config) =>
      sandbox.resolvePermissions(path, exportName, config),
  };
}
