/**
 * One imported MCP server's state between calls: its client while it runs,
 * its tools, and, while it does not run, why not and when the next start may
 * be tried. Failed starts back off (250 ms doubling, at most 30 s); a crash
 * after a good start may restart at once.
 *
 * @module
 */

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerSpec } from "./imported.ts";
import type { ImportedSkill, RefusedSkill } from "./imported_skills.ts";
import { scrubServer, serverSecrets } from "./server_secrets.ts";

/** The longest wait between two failed starts. */
export const MAX_BACKOFF_MS = 30_000;

/**
 * An imported server's state.
 *
 * @example Failed starts back off, doubling
 * ```ts
 * import { ServerSlot } from "./server_slot.ts";
 * import assert from "node:assert/strict";
 * const slot = new ServerSlot("files", { command: "files-mcp" });
 * slot.failed("exit 1", 0);
 * slot.failed("exit 1", 0);
 * assert.equal(slot.waitMs(0), 500);
 * assert.equal(slot.reason, "exit 1");
 * ```
 */
export class ServerSlot {
  /** The toolkit name. */
  readonly name: string;
  /** How to start or reach it. */
  readonly spec: McpServerSpec;
  /** The connected client, or null while it does not run. */
  client: Client | null = null;
  /** Its tools as last listed. */
  tools: McpTool[] = [];
  /** Its skills (Skills extension) as last listed and verified. */
  skills: ImportedSkill[] = [];
  /** Its skills refused at the last listing, with why. */
  refusedSkills: RefusedSkill[] = [];
  /** Its entry's secrets (env and header values), scrubbed from all it says. */
  readonly secrets: readonly string[];
  /** Why it does not run ("" while it does), its secrets scrubbed. */
  reason = "not started";
  /** The start under way, if any: calls arriving meanwhile share it. */
  starting: Promise<void> | null = null;
  #failures = 0;
  #retryAt = 0;

  /**
   * @param name the toolkit name
   * @param spec how to start or reach it
   */
  constructor(name: string, spec: McpServerSpec) {
    this.name = name;
    this.spec = spec;
    this.secrets = serverSecrets(spec);
  }

  /**
   * Records a good start.
   *
   * @param client the connected client
   */
  started(client: Client): void {
    this.client = client;
    this.#failures = 0;
    this.reason = "";
  }

  /**
   * Records a failed start: the next one waits longer.
   *
   * @param reason why it failed
   * @param now the time, in ms since the epoch
   */
  failed(reason: string, now: number): void {
    this.client = null;
    this.#failures++;
    this.reason = scrubServer(reason, this.secrets);
    this.#retryAt = now +
      Math.min(MAX_BACKOFF_MS, 250 * 2 ** (this.#failures - 1));
  }

  /**
   * Records that `client` closed, unless it is no longer this slot's.
   *
   * @param client the client that closed
   * @param reason why
   * @returns whether the slot changed
   */
  exited(client: Client, reason: string): boolean {
    if (this.client !== client) return false;
    this.client = null;
    this.reason = scrubServer(reason, this.secrets);
    // A crash after a good start restarts on the next call.
    this.#retryAt = 0;
    return true;
  }

  /**
   * How long a start must still wait (≤ 0: it may be tried now).
   *
   * @param now the time, in ms since the epoch
   * @returns milliseconds
   */
  waitMs(now: number): number {
    return this.#retryAt - now;
  }
}
