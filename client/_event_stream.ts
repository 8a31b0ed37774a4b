/**
 * A replayable async stream: items pushed before anyone iterates are kept, so
 * a caller that starts `for await` late still sees every event of a call.
 *
 * @module
 */

/**
 * An append-only list that async iterators read from the start and wait on
 * for more, until it is ended (normally or with an error).
 */
export class EventStream<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #ended = false;
  #failure: { error: unknown } | undefined;
  #waiters: (() => void)[] = [];

  /** Appends an item; ignored once the stream has ended. */
  push(item: T): void {
    if (this.#ended) return;
    this.#items.push(item);
    this.#wake();
  }

  /** Ends the stream; with `failure`, iterators throw its error after the items. */
  end(failure?: { error: unknown }): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#failure = failure;
    this.#wake();
  }

  /** Every item pushed so far. */
  get items(): readonly T[] {
    return this.#items;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let next = 0;
    while (true) {
      if (next < this.#items.length) {
        yield this.#items[next++] as T;
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
