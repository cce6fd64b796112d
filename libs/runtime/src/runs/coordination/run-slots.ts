import type { RunQueue } from './ports';

/**
 * At most `limit` runs execute at once in this process; the others wait their turn, first come
 * first served. Without a bound, a burst of sends starts every run at once: they share the CPU
 * and the database pool evenly, so every one of them slows down together and storage writes
 * start timing out (seen with 200 simultaneous turns on PostgreSQL). A queued run holds no
 * connection and no model request; it stays `queued` in storage until it gets a slot.
 */
export class RunSlots implements RunQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`maxConcurrentRuns must be a positive integer (got ${limit})`);
    }
  }

  /** Runs executing now. */
  get active(): number {
    return this.running;
  }

  /** Runs waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Resolves with the function that gives the slot back (call it exactly once), or with null
   * when `signal` aborted before a slot was free (the run never started).
   */
  acquire(signal: AbortSignal): Promise<(() => void) | null> {
    if (signal.aborted) return Promise.resolve(null);
    if (this.running < this.limit) {
      this.running += 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve(this.releaser());
      };
      const onAbort = (): void => {
        const index = this.waiting.indexOf(grant);
        if (index !== -1) this.waiting.splice(index, 1);
        resolve(null);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter: `running` stays the same.
      if (next) next();
      else this.running -= 1;
    };
  }
}
