/**
 * In-process serialisation per session: `run(sessionId, fn)` runs `fn` after every earlier
 * call for the session settled (whether it succeeded or not). What the scheduler's sends and
 * starts of one session go through, so a losing concurrent send never stores a message that no
 * run answers (storage still arbitrates between nodes).
 */
export class SessionLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(sessionId) ?? Promise.resolve();
    const current = previous.then(fn, fn);
    const settled = current.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(sessionId, settled);
    try {
      return await current;
    } finally {
      if (this.tails.get(sessionId) === settled) this.tails.delete(sessionId);
    }
  }
}
