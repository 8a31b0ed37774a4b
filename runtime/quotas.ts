/**
 * Quotas per auth token, from `policy.tokens` in `skillbox.jsonc`:
 *
 * ```jsonc
 * "policy": {
 *   "tokens": {
 *     "ci-token": { "max_sessions": 4, "max_parallel": 8, "calls_per_minute": 600 }
 *   }
 * }
 * ```
 *
 * `max_sessions` caps the token's admitted sessions (a further handshake is
 * refused), `max_parallel` the calls its sessions run at once (more wait),
 * `calls_per_minute` the calls it starts in any 60 s (more are refused with
 * a retryable error). A field left out does not limit.
 *
 * @module
 */

import { z } from "zod";
import { describeZodError } from "../protocol/request_schemas.ts";
import { SkillboxError } from "../protocol/errors.ts";

/** One token's quota; a field left out does not limit. */
export interface TokenQuota {
  /** Sessions admitted at once. */
  maxSessions?: number;
  /** Calls its sessions run at once. */
  maxParallel?: number;
  /** Calls started in any 60 s. */
  callsPerMinute?: number;
}

const count = z.number().int().positive().optional();
const QuotaSchema = z.strictObject({
  max_sessions: count,
  max_parallel: count,
  calls_per_minute: count,
});
const Section = z.object({
  tokens: z.record(z.string(), QuotaSchema).default({}),
});

/**
 * Reads the token quotas out of the `policy` section (other keys in it
 * belong to their owners).
 *
 * @param policy `config.policy` as written
 * @param tokens the configured tokens: a quota must name one of them
 * @returns the quotas by token
 * @throws {TypeError} naming the field path (never the token) when malformed
 * @example Parse one quota
 * ```ts
 * import { parseTokenQuotas } from "./quotas.ts";
 * import assert from "node:assert/strict";
 * const quotas = parseTokenQuotas({ tokens: { t1: { max_sessions: 2 } } }, ["t1"]);
 * assert.equal(quotas.get("t1")?.maxSessions, 2);
 * assert.throws(() => parseTokenQuotas({ tokens: { t2: {} } }, ["t1"]), TypeError);
 * ```
 */
export function parseTokenQuotas(
  policy: unknown,
  tokens: readonly string[],
): Map<string, TokenQuota> {
  const parsed = Section.safeParse(policy ?? {});
  if (!parsed.success) {
    // Paths name the token: keep only the field that is wrong.
    const issue = parsed.error.issues[0];
    const field = issue?.path.length && issue.path.length > 2
      ? `.${issue.path.slice(2).join(".")}`
      : "";
    throw new TypeError(
      `policy.tokens.<token>${field}: ${
        describeZodError(parsed.error).replace(/^[^:]*: /, "")
      }`,
    );
  }
  const quotas = new Map<string, TokenQuota>();
  // A set: a file may list many thousands of tokens with a quota each.
  const listed = new Set(tokens);
  for (const [token, quota] of Object.entries(parsed.data.tokens)) {
    if (!listed.has(token)) {
      throw new TypeError(
        'policy.tokens: a quota names a token that is not listed in "tokens"',
      );
    }
    quotas.set(token, {
      maxSessions: quota.max_sessions,
      maxParallel: quota.max_parallel,
      callsPerMinute: quota.calls_per_minute,
    });
  }
  return quotas;
}

/**
 * Counts the calls each token started in the last minute.
 *
 * @example Refuse the third call of a two-per-minute token
 * ```ts
 * import { CallRate } from "./quotas.ts";
 * import assert from "node:assert/strict";
 * let now = 0;
 * const rate = new CallRate(() => now);
 * assert.equal(rate.take("t", 2), true);
 * assert.equal(rate.take("t", 2), true);
 * assert.equal(rate.take("t", 2), false);
 * now = 60_001;
 * assert.equal(rate.take("t", 2), true);
 * ```
 */
export class CallRate {
  #now: () => number;
  #starts = new Map<string, number[]>();

  /** @param now the clock in ms @default performance.now */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /**
   * Counts one call for `token` if it is under `perMinute`.
   *
   * @param token the token
   * @param perMinute its quota
   * @returns false (and counts nothing) when the quota is used up
   */
  take(token: string, perMinute: number): boolean {
    const now = this.#now();
    let starts = this.#starts.get(token);
    if (!starts) this.#starts.set(token, starts = []);
    // At most `perMinute` entries are kept: memory is bounded by the quota.
    while (starts.length > 0 && now - starts[0]! >= 60_000) starts.shift();
    if (starts.length >= perMinute) return false;
    starts.push(now);
    return true;
  }

  /**
   * Counts one call of `type` against the token's `calls_per_minute`.
   *
   * @param type the request type, for the message
   * @param token the session's token
   * @param quota the token's quota, if any
   * @throws {SkillboxError} `runtime_error`, retryable, when used up
   */
  enforce(type: string, token: string, quota?: TokenQuota): void {
    const perMinute = quota?.callsPerMinute;
    if (perMinute === undefined || this.take(token, perMinute)) return;
    throw new SkillboxError(
      "runtime_error",
      `Cannot handle "${type}": this token's quota of ${perMinute} calls per minute is used up`,
      { retryable: true, detail: { quota: "calls_per_minute" } },
    );
  }
}
