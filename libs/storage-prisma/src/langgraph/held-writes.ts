import type { RunFence } from '@cognition/storage';
import type { WriteRow } from './sql/checkpoint-sql';

/** Stores a batch of regular writes on its own (insert-or-ignore), under its fence. */
export type StoreWrites = (rows: WriteRow[], fence: RunFence | undefined) => Promise<void>;

interface Held {
  threadId: string;
  rows: WriteRow[];
  fence: RunFence | undefined;
  timer: NodeJS.Immediate | undefined;
}

/** Failed flushes remembered for the put that builds on their checkpoint, at most this many. */
const MAX_FAILURES = 256;

/**
 * Regular pending writes held for the `put` that follows them, so that both commit in one
 * statement (PostgreSQL) or transaction (SQLite) instead of two.
 *
 * LangGraph's loop calls `put` for a step's checkpoint only after the step's writes to delta
 * channels resolved, so a write cannot wait for that put: `putWrites` resolves as soon as its
 * writes are held here, and they are stored by whichever comes first —
 * - the put of a child of their checkpoint under the same fence ({@link take}): they commit
 *   with it, or neither does (a crash before that commit leaves the step to run again from its
 *   checkpoint, as a crash before a separate write's commit did);
 * - the next turn of the event loop (`setImmediate`) with no put of their thread under way,
 *   or any read or delete of their thread ({@link settle}): stored on their own, as before,
 *   when no put came at once (a failed or interrupted step, a step whose other tasks still
 *   run). The loop chains a step's put after the previous one, so while that one is under way
 *   the writes of a short step (a tool call) wait for it and go with the put that follows.
 * A flush that fails is remembered by checkpoint: the put that builds on it throws its error,
 * as LangGraph's loop would have skipped that put after the write's rejection.
 */
export class HeldWrites {
  private readonly held = new Map<string, Held>();
  /** Flushes under way, by thread: reads of the thread wait for them. */
  private readonly flushing = new Map<string, Set<Promise<void>>>();
  private readonly failed = new Map<string, unknown>();
  /** Puts under way, by thread. */
  private readonly putting = new Map<string, number>();

  constructor(private readonly store: StoreWrites) {}

  /** Holds `rows` (all of one checkpoint) until a put takes them or they are flushed. */
  hold(rows: WriteRow[], fence: RunFence | undefined): void {
    const first = rows[0];
    if (!first) return;
    const key = keyOf(first.threadId, first.checkpointNs, first.checkpointId);
    const held = this.held.get(key);
    if (held && sameFence(held.fence, fence)) {
      held.rows.push(...rows);
      return;
    }
    if (held) this.flush(key);
    this.held.set(key, {
      threadId: first.threadId,
      rows: [...rows],
      fence,
      timer: this.putting.has(first.threadId) ? undefined : setImmediate(() => this.flush(key)),
    });
  }

  /** A put of `threadId` begins: what is held for the thread waits for its end. */
  beginPut(threadId: string): void {
    this.putting.set(threadId, (this.putting.get(threadId) ?? 0) + 1);
    for (const held of this.held.values()) {
      if (held.threadId === threadId && held.timer) {
        clearImmediate(held.timer);
        held.timer = undefined;
      }
    }
  }

  /**
   * A put of `threadId` ended: what is held for the thread is flushed on the next turn of the
   * event loop, unless the put chained after this one takes it first.
   */
  endPut(threadId: string): void {
    const count = (this.putting.get(threadId) ?? 1) - 1;
    if (count > 0) {
      this.putting.set(threadId, count);
      return;
    }
    this.putting.delete(threadId);
    for (const [key, held] of this.held) {
      if (held.threadId === threadId && !held.timer) {
        held.timer = setImmediate(() => this.flush(key));
      }
    }
  }

  /**
   * The writes held for checkpoint `checkpointId`, taken for the put of its child under
   * `fence`; writes held under another fence are flushed on their own instead. Rejects with the
   * error of a failed flush of that checkpoint's writes.
   */
  async take(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
    fence: RunFence | undefined,
  ): Promise<WriteRow[]> {
    const key = keyOf(threadId, checkpointNs, checkpointId);
    // A flush already under way (the writes went before the put came) is waited for, so its
    // failure is this put's, as the loop's put waited for the writes.
    const flushes = this.flushing.get(threadId);
    if (flushes) await Promise.all([...flushes]);
    if (this.failed.has(key)) {
      const error = this.failed.get(key);
      this.failed.delete(key);
      throw error;
    }
    const held = this.held.get(key);
    if (!held) return [];
    if (!sameFence(held.fence, fence)) {
      this.flush(key);
      return [];
    }
    if (held.timer) clearImmediate(held.timer);
    this.held.delete(key);
    return firstWins(held.rows);
  }

  /** Puts back writes a put took but did not store (it threw): stored on their own now. */
  async restore(rows: WriteRow[], fence: RunFence | undefined): Promise<void> {
    if (rows.length === 0) return;
    this.hold(rows, fence);
    await this.settle(rows[0]?.threadId);
  }

  /**
   * Stores what is held for `threadId` (for every thread when undefined) and waits for the
   * flushes of it under way, so a read sees every write `putWrites` resolved.
   */
  async settle(threadId?: string): Promise<void> {
    for (const [key, held] of this.held) {
      if (threadId === undefined || held.threadId === threadId) this.flush(key);
    }
    const pending =
      threadId === undefined
        ? [...this.flushing.values()].flatMap((flushes) => [...flushes])
        : [...(this.flushing.get(threadId) ?? [])];
    if (pending.length > 0) await Promise.all(pending);
  }

  private flush(key: string): void {
    const held = this.held.get(key);
    if (!held) return;
    if (held.timer) clearImmediate(held.timer);
    this.held.delete(key);
    const { threadId } = held;
    let flushes = this.flushing.get(threadId);
    if (!flushes) {
      flushes = new Set();
      this.flushing.set(threadId, flushes);
    }
    const running = this.store(firstWins(held.rows), held.fence).then(
      () => {
        this.failed.delete(key);
      },
      (error: unknown) => {
        if (this.failed.size >= MAX_FAILURES) {
          const oldest = this.failed.keys().next().value;
          if (oldest !== undefined) this.failed.delete(oldest);
        }
        this.failed.set(key, error);
      },
    );
    flushes.add(running);
    void running.finally(() => {
      flushes.delete(running);
      if (flushes.size === 0 && this.flushing.get(threadId) === flushes) {
        this.flushing.delete(threadId);
      }
    });
  }
}

function keyOf(threadId: string, checkpointNs: string, checkpointId: string): string {
  return `${threadId}\u0000${checkpointNs}\u0000${checkpointId}`;
}

function sameFence(a: RunFence | undefined, b: RunFence | undefined): boolean {
  if (!a || !b) return a === b;
  return a.runId === b.runId && a.ownerNode === b.ownerNode && a.claim === b.claim;
}

/**
 * One row per `(task, idx)`, the first held: regular writes never overwrite a stored one, and a
 * statement must not carry the same key twice.
 */
function firstWins(rows: WriteRow[]): WriteRow[] {
  const seen = new Set<string>();
  return rows.filter((row) => {
    const key = `${row.taskId}\u0000${row.idx}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
