/**
 * A replayable async stream: items pushed before anyone iterates are kept, so
 * a caller that starts `for await` late still sees the events of a call, up
 * to a bound: a host that never stops sending must not take the client's
 * memory.
 *
 * @module
 */

/** Most items a stream keeps for iterators that have not read them yet. */
export const KEPT_ITEMS = 10_000;

/** Most characters (as the host sent them) of the items a stream keeps. */
export const KEPT_CHARS: number = 16 * 1024 * 1024;

/**
 * An append-only list that async iterators read from the start and wait on
 * for more, until it is ended (normally or with an error). Past
 * {@link KEPT_ITEMS} items or {@link KEPT_CHARS} characters the oldest are
 * let go: an iterator that starts late or falls that far behind goes on
 * from the oldest item still kept.
 */
export class EventStream<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #sizes: number[] = [];
  // Items before `#head` in `#items` are let go (compacted now and then).
  #head = 0;
  // How many items were let go in all: an iterator's position is absolute.
  #gone = 0;
  #chars = 0;
  #ended = false;
  #failure: { error: unknown } | undefined;
  #waiters: (() => void)[] = [];

  /**
   * Appends an item; ignored once the stream has ended.
   *
   * @param item the item
   * @param size its size in characters, as received @default 0
   */
  push(item: T, size: number = 0): void {
    if (this.#ended) return;
    this.#items.push(item);
    this.#sizes.push(size);
    this.#chars += size;
    // The newest item is always kept.
    while (
      this.#items.length - this.#head > 1 &&
      (this.#items.length - this.#head > KEPT_ITEMS ||
        this.#chars > KEPT_CHARS)
    ) {
      this.#chars -= this.#sizes[this.#head]!;
      this.#head++;
      this.#gone++;
    }
    // Compacted once half is let go: amortized constant time a push.
    if (this.#head > 0 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#sizes = this.#sizes.slice(this.#head);
      this.#head = 0;
    }
    this.#wake();
  }

  /** Ends the stream; with `failure`, iterators throw its error after the items. */
  end(failure?: { error: unknown }): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#failure = failure;
    this.#wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let next = 0; // counted from the first item ever pushed
    while (true) {
      next = Math.max(next, this.#gone);
      const at = this.#head + next - this.#gone;
      if (at < this.#items.length) {
        next++;
        yield this.#items[at] as T;
        continue;
      }
      if (this.#ended) {
        if (this.#failure) throw this.#failure.error;
        return;
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
