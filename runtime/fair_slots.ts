/**
 * The host-wide call slots (`max_parallel_host`), shared fairly between auth
 * tokens and between sessions.
 *
 * Every live session may always run one call of its own (its "floor"), so a
 * few sessions holding never-ending calls can never stop another session's
 * call from starting. Calls beyond a session's first draw from a pool of
 * `limit` slots; a freed pool slot goes to the waiting token holding the
 * fewest pool slots, then to that token's waiting session holding the
 * fewest, then to the oldest waiter. A token may also be capped in total
 * (its `max_parallel` quota). Nothing is dropped: waiters queue (each
 * session's queue is already bounded by its own `max_parallel`).
 *
 * Running calls are bounded by `limit` plus one per session with a call.
 *
 * @module
 */

import type { Release } from "./semaphore.ts";

/** Who asks for a slot. */
export interface SlotOwner {
  /** The session's id. */
  session: string;
  /** The session's auth token ("" when none). */
  token: string;
  /** The most calls the token's sessions run at once. @default Infinity */
  tokenLimit?: number;
}

const CODE_FREE_TYPES: ReadonlySet<string> = new Set([
  "tool/list/req",
  "toolkit/list/req",
  "toolkit/configure/req",
  "skill/discover/req",
]);

/**
 * Whether a request type runs code and so needs a call slot. Lists,
 * searches, discovery and toolkit configuration do not: they never wait
 * behind calls.
 *
 * @param type the request type
 * @returns false for the types that run no code
 * @example
 * ```ts
 * import { runsCode } from "./fair_slots.ts";
 * import assert from "node:assert/strict";
 * assert.equal(runsCode("tool/call/req"), true);
 * assert.equal(runsCode("tool/list/req"), false);
 * ```
 */
export function runsCode(type: string): boolean {
  return !CODE_FREE_TYPES.has(type);
}

type Kind = "floor" | "pool";

interface Waiter {
  seq: number;
  resolve: (release: Release) => void;
}

interface SessionSlots {
  token: TokenSlots;
  running: number;
  pooled: number;
  queue: Waiter[];
}

interface TokenSlots {
  running: number;
  pooled: number;
  limit: number;
}

/**
 * Fair host-wide call slots.
 *
 * @example A session holding every pool slot cannot stop another's call
 * ```ts
 * import { FairSlots } from "./fair_slots.ts";
 * import assert from "node:assert/strict";
 * const slots = new FairSlots(1);
 * const a = { session: "a", token: "" };
 * await slots.acquire(a); // a's floor
 * await slots.acquire(a); // the one pool slot
 * const third = slots.acquire(a); // waits
 * const b = await slots.acquire({ session: "b", token: "" }); // b's floor: at once
 * assert.equal(slots.waiting, 1);
 * b();
 * assert.equal(slots.running, 2);
 * void third;
 * ```
 */
export class FairSlots {
  #limit: number;
  #pooled = 0;
  #running = 0;
  #waiting = 0;
  #seq = 0;
  #sessions = new Map<string, SessionSlots>();
  #tokens = new Map<string, TokenSlots>();

  /**
   * @param limit the pool: calls beyond each session's first (at least 1)
   * @throws {RangeError} when `limit` is not a positive integer
   */
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(
        `Cannot create call slots: limit "${limit}" is not a positive integer`,
      );
    }
    this.#limit = limit;
  }

  /** Calls running now (floors and pool). */
  get running(): number {
    return this.#running;
  }

  /** Pool slots held now. */
  get pooled(): number {
    return this.#pooled;
  }

  /** Calls waiting for a slot. */
  get waiting(): number {
    return this.#waiting;
  }

  /**
   * Takes a slot at once when one is free for this owner and nobody of its
   * session waits before it (no promise, no event-loop turn).
   *
   * @param owner the session and token asking
   * @returns a function that frees the slot, or null: wait with
   *   {@link acquire}
   * @example
   * ```ts
   * import { FairSlots } from "./fair_slots.ts";
   * import assert from "node:assert/strict";
   * const slots = new FairSlots(1);
   * const owner = { session: "a", token: "" };
   * const floor = slots.tryAcquire(owner);
   * const pooled = slots.tryAcquire(owner);
   * assert.ok(floor && pooled);
   * assert.equal(slots.tryAcquire(owner), null);
   * pooled();
   * floor();
   * assert.equal(slots.running, 0);
   * ```
   */
  tryAcquire(owner: SlotOwner): Release | null {
    const session = this.#session(owner);
    if (session.queue.length === 0) {
      const kind = this.#grantable(session);
      if (kind) return this.#grant(owner.session, kind);
    }
    this.#forget(owner.session, session);
    return null;
  }

  /**
   * Waits for a slot.
   *
   * @param owner the session and token asking
   * @param signal gives up waiting (rejecting with its reason) when aborted
   * @returns a function that frees the slot (idempotent)
   */
  acquire(owner: SlotOwner, signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const session = this.#session(owner);
    if (session.queue.length === 0) {
      const kind = this.#grantable(session);
      if (kind) return Promise.resolve(this.#grant(owner.session, kind));
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = { seq: this.#seq++, resolve };
      const onAbort = () => {
        const at = session.queue.indexOf(waiter);
        if (at < 0) return;
        session.queue.splice(at, 1);
        this.#waiting--;
        this.#forget(owner.session, session);
        reject(signal?.reason);
      };
      waiter.resolve = (release) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(release);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      session.queue.push(waiter);
      this.#waiting++;
    });
  }

  #session(owner: SlotOwner): SessionSlots {
    let token = this.#tokens.get(owner.token);
    if (!token) {
      token = { running: 0, pooled: 0, limit: Infinity };
      this.#tokens.set(owner.token, token);
    }
    token.limit = owner.tokenLimit ?? Infinity;
    let session = this.#sessions.get(owner.session);
    if (!session) {
      session = { token, running: 0, pooled: 0, queue: [] };
      this.#sessions.set(owner.session, session);
    }
    return session;
  }

  #grantable(session: SessionSlots): Kind | null {
    if (session.token.running >= session.token.limit) return null;
    if (session.running === 0) return "floor";
    return this.#pooled < this.#limit ? "pool" : null;
  }

  #grant(id: string, kind: Kind): Release {
    const session = this.#sessions.get(id)!;
    session.running++;
    session.token.running++;
    this.#running++;
    if (kind === "pool") {
      session.pooled++;
      session.token.pooled++;
      this.#pooled++;
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      session.running--;
      session.token.running--;
      this.#running--;
      if (kind === "pool") {
        session.pooled--;
        session.token.pooled--;
        this.#pooled--;
      }
      this.#forget(id, session);
      this.#dispatch();
    };
  }

  #forget(id: string, session: SessionSlots): void {
    if (session.running === 0 && session.queue.length === 0) {
      this.#sessions.delete(id);
    }
  }

  // Hands free slots to waiters, best candidate first, until none fits.
  #dispatch(): void {
    while (this.#waiting > 0) {
      let best: { id: string; session: SessionSlots; kind: Kind } | null = null;
      for (const [id, session] of this.#sessions) {
        const head = session.queue[0];
        if (!head) continue;
        const kind = this.#grantable(session);
        if (!kind) continue;
        if (!best || before(session, kind, best.session, best.kind)) {
          best = { id, session, kind };
        }
      }
      if (!best) return;
      const waiter = best.session.queue.shift()!;
      this.#waiting--;
      waiter.resolve(this.#grant(best.id, best.kind));
    }
  }
}

// Floors first; then the token, then the session, holding fewer pool slots;
// then the older waiter.
function before(
  a: SessionSlots,
  aKind: Kind,
  b: SessionSlots,
  bKind: Kind,
): boolean {
  if (aKind !== bKind) return aKind === "floor";
  if (a.token.pooled !== b.token.pooled) return a.token.pooled < b.token.pooled;
  if (a.pooled !== b.pooled) return a.pooled < b.pooled;
  return a.queue[0]!.seq < b.queue[0]!.seq;
}
