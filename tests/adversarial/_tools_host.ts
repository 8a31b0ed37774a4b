/**
 * A real host serving a few tools written for one test, from a folder of
 * its own, with the default configuration and net to `localhost` (the
 * operator lets the broker reach the test's loopback server).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost, type Host } from "../../runtime/host.ts";
import { defaultConfig } from "../../runtime/config.ts";
import type { EgressConfig } from "../../runtime/config_schema.ts";
import { CONFINEMENT_MODE } from "./_confined.ts";

/** A started host; `close` ends it and removes its tools' folder. */
export interface ToolsHost {
  host: Host;
  close(): Promise<void>;
}

/**
 * Starts a host serving `tools` (file name to source) and nothing else.
 *
 * @param tools the tools' sources, by file name
 * @param egress what differs from the default `egress` section
 * @returns the host, once ready with no load errors
 */
export async function startToolsHost(
  tools: Record<string, string>,
  egress: Partial<EgressConfig> = {},
): Promise<ToolsHost> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_tools_" });
  for (const [name, source] of Object.entries(tools)) {
    await Deno.writeTextFile(join(dir, name), source);
  }
  const base = defaultConfig();
  const host = createHost({
    config: {
      skills: [dir],
      builtinSkills: false,
      sandbox: {
        ...base.sandbox,
        cacheDir: null,
        confinement: CONFINEMENT_MODE,
      },
      egress: { ...base.egress, allowPrivateHosts: ["localhost"], ...egress },
      policy: { permissions: { net: ["localhost"] } },
    },
  });
  const report = await host.ready;
  assert.deepEqual(report.errors, []);
  return {
    host,
    async close() {
      await host.close({ timeoutSeconds: 1 });
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
