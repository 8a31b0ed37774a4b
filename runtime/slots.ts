/**
 * Waiting for a share of something limited, written once. One line of
 * waiters ({@link WaitQueue}: in arrival order, each until it is handed what
 * it waits for, its signal aborts or its deadline passes) serves every limit
 * of the host:
 *
 * - {@link Semaphore}, a counted limit: a session's `max_parallel`, bounded
 *   file reads, the slot a running call lends its inner calls;
 * - {@link FairSlots}, the host-wide call slots (`max_parallel_host`)
 *   shared fairly between auth tokens and between sessions;
 * - the sandbox process pool's wait for room under its process cap.
 *
 * Nothing is dropped: waiters queue. A free slot is taken without a promise
 * or an event-loop turn (`tryAcquire`): the warm call path takes two, the
 * session's and then the host's, and awaits neither.
 *
 * @module
 */

import { type Cancellable, unwatchAbort, watchAbort } from "./deadline.ts";

/** Gives back a slot taken from a {@link Semaphore} or {@link FairSlots}; idempotent. */
export type Release = () => void;

/** Options of {@link WaitQueue.wait}. */
export interface WaitOptions {
  /** Gives up waiting, rejecting with its reason, when it aborts. @default none */
  signal?: AbortSignal;
  /** `performance.now()` at which the wait gives up. @default none */
  deadline?: number;
  /**
   * The reason to reject with at the deadline, given how long this wait
   * lasted (ms, rounded). @default a `TimeoutError` DOMException
   */
  onTimeout?: (waitedMs: number) => unknown;
  /** Waits at the front of the line (woken before, it found no room). @default false */
  front?: boolean;
}

// Arrival numbers, shared by every queue so that the first waiters of two
// queues can be compared (FairSlots: the older waiter goes first).
let arrivals = 0;

interface Waiter<T> extends Cancellable {
  arrival: number;
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * A line of waiters, first come first served, each until it is handed a
 * value ({@link handOver}, {@link wake}), its signal aborts or its deadline
 * passes (then it leaves the line and its wait rejects).
 *
 * @example Two waiters served in arrival order
 * ```ts
 * import { WaitQueue } from "./slots.ts";
 * import assert from "node:assert/strict";
 * const queue = new WaitQueue<string>();
 * const first = queue.wait();
 * const second = queue.wait();
 * queue.handOver("a");
 * queue.handOver("b");
 * assert.deepEqual(await Promise.all([first, second]), ["a", "b"]);
 * assert.equal(queue.handOver("c"), false);
 * ```
 */
export class WaitQueue<T = void> {
  // Two lines: those put back at the front (rare, few: the newest first),
  // then the rest in arrival order. The rest are a Set, so a waiter leaves
  // in one step: spliced out of an array, each leaver moved all behind it,
  // and a client cancelling 40,000 queued calls one by one held the host's
  // thread for seconds.
  readonly #front: Waiter<T>[] = [];
  readonly #rest = new Set<Waiter<T>>();
  readonly #onLeave: (() => void) | undefined;

  /**
   * @param onLeave called after a waiter gave up (its signal aborted or its
   *   deadline passed) and left the line
   */
  constructor(onLeave?: () => void) {
    this.#onLeave = onLeave;
  }

  /** Waiters in line. */
  get length(): number {
    return this.#front.length + this.#rest.size;
  }

  /**
   * The arrival number of the first waiter (smaller arrived earlier, in any
   * queue), or `Infinity` when none waits.
   */
  get firstArrival(): number {
    return this.#first()?.arrival ?? Infinity;
  }

  /**
   * Waits in line.
   *
   * @param options the signal and deadline that end the wait, and where to
   *   wait
   * @returns what {@link handOver} hands this waiter
   * @throws the signal's reason (rejects) when it aborts, even before the wait
   * @throws what `onTimeout` returns (rejects) at the deadline
   */
  wait(options: WaitOptions = {}): Promise<T> {
    const { signal, deadline } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        arrival: arrivals++,
        resolve,
        reject,
        signal,
        timer: undefined,
        cancel: (reason) => this.#leave(waiter, reason),
      };
      // One listener per signal however many wait on it (a session's
      // signal, shared by all its waiting calls): with a listener each,
      // every removal scanned all the others, and a client that queued
      // 20 000 calls then left held the host's thread for minutes.
      if (signal) watchAbort(signal, waiter);
      if (deadline !== undefined) {
        const started = performance.now();
        waiter.timer = setTimeout(() => {
          const waited = Math.round(performance.now() - started);
          this.#leave(
            waiter,
            options.onTimeout?.(waited) ??
              new DOMException(`Timed out after ${waited} ms`, "TimeoutError"),
          );
        }, Math.max(0, deadline - performance.now()));
      }
      if (options.front) this.#front.unshift(waiter);
      else this.#rest.add(waiter);
    });
  }

  /**
   * Hands `value` to the first waiter, which leaves the line.
   *
   * @param value what it waited for
   * @returns false when nobody waits (`value` is not used)
   * @example
   * ```ts
   * import { WaitQueue } from "./slots.ts";
   * import assert from "node:assert/strict";
   * assert.equal(new WaitQueue<number>().handOver(1), false);
   * ```
   */
  handOver(value: T): boolean {
    const waiter = this.#first();
    if (!waiter) return false;
    this.#remove(waiter);
    unhook(waiter);
    waiter.resolve(value);
    return true;
  }

  /**
   * Wakes up to `count` waiters of a `void` line, first first.
   *
   * @param count how many may go (all of them when omitted)
   * @example
   * ```ts
   * import { WaitQueue } from "./slots.ts";
   * import assert from "node:assert/strict";
   * const queue = new WaitQueue();
   * const waits = [queue.wait(), queue.wait(), queue.wait()];
   * queue.wake(2);
   * assert.equal(queue.length, 1);
   * queue.wake();
   * await Promise.all(waits);
   * ```
   */
  wake(this: WaitQueue<void>, count: number = Infinity): void {
    while (count-- > 0 && this.handOver()) { /* next */ }
  }

  #first(): Waiter<T> | undefined {
    if (this.#front.length > 0) return this.#front[0];
    for (const waiter of this.#rest) return waiter;
  }

  // Whether the waiter was in line (it leaves it).
  #remove(waiter: Waiter<T>): boolean {
    if (this.#rest.delete(waiter)) return true;
    const at = this.#front.indexOf(waiter);
    if (at >= 0) this.#front.splice(at, 1);
    return at >= 0;
  }

  #leave(waiter: Waiter<T>, reason: unknown): void {
    if (!this.#remove(waiter)) return;
    unhook(waiter);
    waiter.reject(reason);
    this.#onLeave?.();
  }
}

// A waiter left the line: its signal and its deadline no longer concern it.
function unhook<T>(waiter: Waiter<T>): void {
  clearTimeout(waiter.timer);
  if (waiter.signal) unwatchAbort(waiter.signal, waiter);
}

/**
 * Lets at most `limit` holders run at once; the rest wait in arrival order.
 *
 * @example Limit to one holder at a time
 * ```ts
 * import { Semaphore } from "./slots.ts";
 * import assert from "node:assert/strict";
 * const gate = new Semaphore(1);
 * const first = await gate.acquire();
 * const second = gate.acquire();
 * assert.equal(gate.waiting, 1);
 * first();
 * (await second)();
 * assert.equal(gate.active, 0);
 * ```
 */
export class Semaphore {
  readonly #limit: number;
  #active = 0;
  readonly #queue = new WaitQueue<Release>();

  /**
   * @param limit how many holders may run at once (at least 1)
   * @throws {RangeError} when `limit` is not a positive integer
   */
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(
        `Cannot create semaphore: limit "${limit}" is not a positive integer`,
      );
    }
    this.#limit = limit;
  }

  /** How many holders run now. */
  get active(): number {
    return this.#active;
  }

  /** How many acquirers wait for a slot. */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Takes a slot if one is free, without waiting (the hot path skips a
   * promise and its microtask hop). A slot freed while some wait goes to
   * the first of them, so a free slot means nobody waits.
   *
   * @returns a function that frees the slot, or null when none is free
   * @example Take the only slot, then fail to take another
   * ```ts
   * import { Semaphore } from "./slots.ts";
   * import assert from "node:assert/strict";
   * const gate = new Semaphore(1);
   * const release = gate.tryAcquire();
   * assert.ok(release);
   * assert.equal(gate.tryAcquire(), null);
   * release();
   * assert.equal(gate.active, 0);
   * ```
   */
  tryAcquire(): Release | null {
    if (this.#active >= this.#limit) return null;
    this.#active++;
    return this.#releaser();
  }

  /**
   * Waits for a slot.
   *
   * @param signal gives up waiting (rejecting with its reason) when aborted
   * @returns a function that frees the slot
   */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const free = this.tryAcquire();
    return free ? Promise.resolve(free) : this.#queue.wait({ signal });
  }

  /**
   * Runs `job` in a slot, freed when the job settles.
   *
   * @param job the work to run
   * @returns what the job resolved to
   * @example At most two reads at once
   * ```ts
   * import { Semaphore } from "./slots.ts";
   * import assert from "node:assert/strict";
   * const io = new Semaphore(2);
   * const sizes = await Promise.all(["a", "bb", "ccc"].map((name) =>
   *   io.run(() => Promise.resolve(name.length))
   * ));
   * assert.deepEqual(sizes, [1, 2, 3]);
   * assert.equal(io.active, 0);
   * ```
   */
  async run<T>(job: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await job();
    } finally {
      release();
    }
  }

  #releaser(): Release {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      // The slot passes straight to the next waiter: active stays the same.
      if (this.#queue.length > 0) this.#queue.handOver(this.#releaser());
      else this.#active--;
    };
  }
}

/** Who asks for a slot of {@link FairSlots}. */
export interface SlotOwner {
  /** The session's id. */
  session: string;
  /**
   * The session's auth token ("" when none). The same for every call of a
   * session (it keeps the token it was accepted with): its calls count
   * under the token they asked with first, until none runs or waits.
   */
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
 * import { runsCode } from "./slots.ts";
 * import assert from "node:assert/strict";
 * assert.equal(runsCode("tool/call/req"), true);
 * assert.equal(runsCode("tool/list/req"), false);
 * ```
 */
export function runsCode(type: string): boolean {
  return !CODE_FREE_TYPES.has(type);
}

type Kind = "floor" | "pool";

// Token records kept before the first sweep.
const MIN_SWEEP = 1024;

interface SessionSlots {
  token: TokenSlots;
  running: number;
  pooled: number;
  // Made when the session first waits: a warm call makes none.
  queue: WaitQueue<Release> | undefined;
}

interface TokenSlots {
  running: number;
  pooled: number;
  limit: number;
}

/**
 * The host-wide call slots (`max_parallel_host`), shared fairly between
 * auth tokens and between sessions.
 *
 * Every live session may always run one call of its own (its "floor"), so
 * a few sessions holding never-ending calls can never stop another
 * session's call from starting. Calls beyond a session's first draw from a
 * pool of `limit` slots; a freed pool slot goes to the waiting token
 * holding the fewest pool slots, then to that token's waiting session
 * holding the fewest, then to the oldest waiter. A token may also be capped
 * in total (its `max_parallel` quota). Each session's queue is already
 * bounded by its own `max_parallel`. Running calls are bounded by `limit`
 * plus one per session with a call. Without floors (`floors: false`, for
 * work that never waits on other work of its session, such as the host's
 * outgoing requests), every slot is from the pool: at most `limit` run.
 *
 * @example A session holding every pool slot cannot stop another's call
 * ```ts
 * import { FairSlots } from "./slots.ts";
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
  readonly #limit: number;
  readonly #floors: boolean;
  #pooled = 0;
  #running = 0;
  #waiting = 0;
  readonly #sessions = new Map<string, SessionSlots>();
  readonly #tokens = new Map<string, TokenSlots>();
  // A host without auth takes any token a client names: the records of
  // tokens no session holds are swept once the map doubles, not per call
  // (a warm call reuses its token's record).
  #sweepAt = MIN_SWEEP;

  /**
   * @param limit the pool: calls beyond each session's first (at least 1)
   * @param options `floors: false` gives sessions no slot of their own
   * @throws {RangeError} when `limit` is not a positive integer
   */
  constructor(limit: number, options: { floors?: boolean } = {}) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(
        `Cannot create call slots: limit "${limit}" is not a positive integer`,
      );
    }
    this.#limit = limit;
    this.#floors = options.floors ?? true;
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

  /** Tokens whose counts are kept now (bounded; see the sweep). */
  get tokensKept(): number {
    return this.#tokens.size;
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
   * import { FairSlots } from "./slots.ts";
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
    if (!session.queue?.length) {
      const kind = this.#grantable(session);
      if (kind) return this.#grant(owner.session, session, kind);
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
    const free = this.tryAcquire(owner);
    if (free) return Promise.resolve(free);
    const session = this.#session(owner);
    session.queue ??= new WaitQueue<Release>(() => {
      this.#waiting--;
      this.#forget(owner.session, session);
    });
    this.#waiting++;
    return session.queue.wait({ signal });
  }

  #session(owner: SlotOwner): SessionSlots {
    let token = this.#tokens.get(owner.token);
    if (!token) {
      if (this.#tokens.size >= this.#sweepAt) this.#sweep();
      token = { running: 0, pooled: 0, limit: Infinity };
      this.#tokens.set(owner.token, token);
    }
    token.limit = owner.tokenLimit ?? Infinity;
    let session = this.#sessions.get(owner.session);
    if (!session) {
      session = { token, running: 0, pooled: 0, queue: undefined };
      this.#sessions.set(owner.session, session);
    }
    return session;
  }

  // Forgets the tokens no session record holds (none running or waiting):
  // a record still held must stay the one its sessions count in.
  #sweep(): void {
    const held = new Set<TokenSlots>();
    for (const session of this.#sessions.values()) held.add(session.token);
    for (const [key, token] of this.#tokens) {
      if (!held.has(token)) this.#tokens.delete(key);
    }
    this.#sweepAt = Math.max(MIN_SWEEP, 2 * this.#tokens.size);
  }

  #grantable(session: SessionSlots): Kind | null {
    if (session.token.running >= session.token.limit) return null;
    if (session.running === 0 && this.#floors) return "floor";
    return this.#pooled < this.#limit ? "pool" : null;
  }

  #grant(id: string, session: SessionSlots, kind: Kind): Release {
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
    if (session.running === 0 && !session.queue?.length) {
      this.#sessions.delete(id);
    }
  }

  // Hands free slots to waiters, best candidate first, until none fits.
  #dispatch(): void {
    while (this.#waiting > 0) {
      let best: { id: string; session: SessionSlots; kind: Kind } | null = null;
      for (const [id, session] of this.#sessions) {
        if (!session.queue?.length) continue;
        const kind = this.#grantable(session);
        if (!kind) continue;
        if (!best || before(session, kind, best.session, best.kind)) {
          best = { id, session, kind };
        }
      }
      if (!best) return;
      this.#waiting--;
      const { id, session, kind } = best;
      session.queue!.handOver(this.#grant(id, session, kind));
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
  return a.queue!.firstArrival < b.queue!.firstArrival;
}
