/**
 * One imported MCP server's state between calls: its client while it runs,
 * its tools, and, while it does not run, why not and when the next start is
 * due. Starts that fail, and crashes soon after a start, back off: the
 * first retry after `initialMs`, doubling up to `maxMs`, each wait shortened
 * by up to a fifth at random so that many servers do not retry in step. A
 * server that crashes after running for `stableMs` restarts at once, and its
 * backoff starts over.
 *
 * @module
 */

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerSpec } from "./imported.ts";
import type { ImportedSkill, RefusedSkill } from "./imported_skills.ts";
import { scrubServer, serverSecrets } from "./server_secrets.ts";

/** How an imported server's restarts back off. */
export interface Backoff {
  /** The wait before the first retry. @default 1000 */
  initialMs: number;
  /** The longest wait between two attempts. @default 300000 */
  maxMs: number;
  /**
   * How long a server must have run for a crash to restart it at once and
   * forget the failures before. @default 60000
   */
  stableMs: number;
}

/** The backoff of a server whose entry and `mcp` block say nothing. */
export const DEFAULT_BACKOFF: Backoff = {
  initialMs: 1_000,
  maxMs: 300_000,
  stableMs: 60_000,
};

/** Where a server is: starting, up, or down until its next attempt. */
export type SlotState = "starting" | "up" | "down";

/**
 * An imported server's state.
 *
 * @example Failed starts back off, doubling
 * ```ts
 * import { ServerSlot } from "./server_slot.ts";
 * import assert from "node:assert/strict";
 * const slot = new ServerSlot("files", { command: "files-mcp" }, {
 *   backoff: { initialMs: 1000, maxMs: 300_000, stableMs: 60_000 },
 *   random: () => 0,
 * });
 * slot.failed("exit 1", 0);
 * slot.failed("exit 1", 0);
 * assert.equal(slot.waitMs(0), 2000);
 * assert.equal(slot.reason, "exit 1");
 * ```
 */
export class ServerSlot {
  /** The toolkit name. */
  readonly name: string;
  /** How to start or reach it. */
  readonly spec: McpServerSpec;
  /** How its restarts back off. */
  readonly backoff: Backoff;
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
  reason = "starting";
  /** The start under way, if any: calls arriving meanwhile share it. */
  starting: Promise<void> | null = null;
  /** The transport of the start under way, closed if the host stops. */
  connecting: Transport | null = null;
  /** The timer of the next attempt, while one is due. */
  timer: unknown = undefined;
  /** How many attempts were made (a test and the console read it). */
  attempts = 0;
  /** The state last logged, so a flapping server is logged once. */
  logged: SlotState | null = null;
  #streak = 0;
  #retryAt = 0;
  #upSince = 0;
  #random: () => number;

  /**
   * @param name the toolkit name
   * @param spec how to start or reach it
   * @param options its backoff, and the random source of the jitter
   */
  constructor(
    name: string,
    spec: McpServerSpec,
    options: { backoff?: Backoff; random?: () => number } = {},
  ) {
    this.name = name;
    this.spec = spec;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.#random = options.random ?? Math.random;
    this.secrets = serverSecrets(spec);
  }

  /** Where it is now. */
  get state(): SlotState {
    return this.client !== null ? "up" : this.starting ? "starting" : "down";
  }

  /**
   * Records a good start.
   *
   * @param client the connected client
   * @param now the time, in ms since the epoch
   */
  started(client: Client, now: number): void {
    this.client = client;
    this.reason = "";
    this.#upSince = now;
  }

  /**
   * Records a failed start: the next one waits longer.
   *
   * @param reason why it failed
   * @param now the time, in ms since the epoch
   */
  failed(reason: string, now: number): void {
    this.client = null;
    this.reason = scrubServer(reason, this.secrets);
    this.#backOff(now);
  }

  /**
   * Records that `client` closed, unless it is no longer this slot's. A
   * server that ran for `stableMs` restarts at once; one that crashes
   * sooner backs off as a failed start does.
   *
   * @param client the client that closed
   * @param reason why
   * @param now the time, in ms since the epoch
   * @returns whether the slot changed
   */
  exited(client: Client, reason: string, now: number): boolean {
    if (this.client !== client) return false;
    this.client = null;
    this.reason = scrubServer(reason, this.secrets);
    if (now - this.#upSince >= this.backoff.stableMs) this.#streak = 0;
    if (this.#streak === 0) {
      // Once at once; a second early crash backs off.
      this.#streak = 1;
      this.#retryAt = now;
    } else {
      this.#backOff(now);
    }
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

  #backOff(now: number): void {
    this.#streak++;
    const { initialMs, maxMs } = this.backoff;
    const full = Math.min(
      maxMs,
      initialMs * 2 ** Math.min(this.#streak - 1, 40),
    );
    // Shortened, never lengthened: the cap holds.
    this.#retryAt = now + Math.round(full * (1 - 0.2 * this.#random()));
  }
}
