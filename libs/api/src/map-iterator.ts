/**
 * `source` with `map` applied to each value it yields. A class rather than an async generator or
 * an object of closures: an idle event stream keeps one small object for it, no suspended frame,
 * request queue or closures of its own, only the pending `next()` of `source` (benchmark 4
 * holds 1,000 idle streams). `return()` and `throw()` go straight to `source`, so leaving a loop
 * over it early releases what `source` subscribed to.
 */
export function mapAsyncIterator<T, U>(
  source: AsyncIterable<T, void, undefined>,
  map: (value: T) => U,
): AsyncGenerator<U, void, undefined> {
  return new MappedIterator(source[Symbol.asyncIterator](), map);
}

class MappedIterator<T, U> implements AsyncGenerator<U, void, undefined> {
  constructor(
    private readonly source: AsyncIterator<T, void, undefined>,
    private readonly map: (value: T) => U,
  ) {}

  next(): Promise<IteratorResult<U, void>> {
    return this.source.next().then((result) => this.step(result));
  }

  return(value: void): Promise<IteratorResult<U, void>> {
    if (!this.source.return) return Promise.resolve({ done: true, value });
    return this.source.return(value).then((result) => this.step(result));
  }

  async throw(error: unknown): Promise<IteratorResult<U, void>> {
    if (!this.source.throw) {
      await this.return(undefined);
      throw error;
    }
    return this.step(await this.source.throw(error));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return(undefined);
  }

  private step(result: IteratorResult<T, void>): IteratorResult<U, void> {
    return result.done ? result : { done: false, value: this.map(result.value) };
  }
}
