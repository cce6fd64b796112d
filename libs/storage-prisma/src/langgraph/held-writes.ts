import type { RunFence } from '@cognition/storage';
import { StorageError } from '@cognition/storage';
import type { WriteRow } from './sql/checkpoint-sql';

/** Stores a batch of regular writes on its own (insert-or-ignore), under its fence. */
export type StoreWrites = (rows: WriteRow[], fence: RunFence | undefined) => Promise<void>;

/** One `putWrites` call: its rows (undefined when they could not be serialized) and its caller. */
interface Batch {
  rows: Promise<WriteRow[] | undefined>;
  /** Resolves the call's promise, or rejects it with `error`. */
  settle(error?: Error): void;
}

interface Held {
  threadId: string;
  fence: RunFence | undefined;
  batches: Batch[];
  timer: NodeJS.Immediate | undefined;
}

/** What a put takes: the writes it stores with its row, and whom to tell how that went. */
export interface Carried {
  rows: Promise<WriteRow[]>;
  batches: Batch[];
  fence: RunFence | undefined;
  threadId: string;
}

/**
 * Regular pending writes held for the `put` that follows them, so that both commit in one
 * statement (PostgreSQL) or transaction (SQLite) instead of two.
 *
 * A `putWrites` promise settles when its writes are committed, as before: with the put of a
 * child of their checkpoint under the same fence ({@link take}), when that put commits; else
 * on their own, on the event loop's next turn with no put of their thread under way, or at
 * once before a read or delete of their thread ({@link settle}). LangGraph's loop does not wait
 * for a step's writes before it puts the step's checkpoint (only for writes to delta channels,
 * which then simply go on their own a turn later), so the put comes while they are held; while
 * the previous step's put is still under way (a short tool step), they wait for its end and go
 * with the put chained after it. A put that fails hands what it carried back, stored on its
 * own at once: the writes' promise then settles as a separate write's would have.
 */
export class HeldWrites {
  private readonly held = new Map<string, Held>();
  /** Flushes under way, by thread: reads of the thread wait for them. */
  private readonly flushing = new Map<string, Set<Promise<void>>>();
  /** Puts under way, by thread. */
  private readonly putting = new Map<string, number>();

  constructor(private readonly store: StoreWrites) {}

  /**
   * Holds the writes of one `putWrites` call on checkpoint `checkpointId`, taken now (so a put
   * called right after takes them even while `rows` are still being serialized); settles when
   * they are committed.
   */
  hold(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
    fence: RunFence | undefined,
    rows: Promise<WriteRow[]>,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const batch: Batch = {
        rows: rows.catch(() => undefined),
        settle: (error?: Error) => (error === undefined ? resolve() : reject(error)),
      };
      const key = keyOf(threadId, checkpointNs, checkpointId);
      const held = this.held.get(key);
      if (held && sameFence(held.fence, fence)) {
        held.batches.push(batch);
        return;
      }
      if (held) this.flush(key);
      this.held.set(key, {
        threadId,
        fence,
        batches: [batch],
        timer: this.putting.has(threadId) ? undefined : setImmediate(() => this.flush(key)),
      });
    });
  }

  /**
   * The writes held for checkpoint `checkpointId`, for the put of its child under `fence`:
   * taken at once, undefined when there are none (writes held under another fence are flushed
   * on their own instead). The put then calls {@link done} or {@link giveBack}.
   */
  take(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
    fence: RunFence | undefined,
  ): Carried | undefined {
    const key = keyOf(threadId, checkpointNs, checkpointId);
    const held = this.held.get(key);
    if (!held) return undefined;
    if (!sameFence(held.fence, fence)) {
      this.flush(key);
      return undefined;
    }
    if (held.timer) clearImmediate(held.timer);
    this.held.delete(key);
    return { rows: rowsOf(held.batches), batches: held.batches, fence, threadId };
  }

  /** The put that carried `carried` committed. */
  done(carried: Carried | undefined): void {
    for (const batch of carried?.batches ?? []) batch.settle();
  }

  /** The put that carried `carried` failed: they are stored on their own now. */
  giveBack(carried: Carried | undefined): void {
    if (!carried) return;
    this.run(carried.threadId, carried.batches, carried.fence);
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
   * Stores what is held for `threadId` (for every thread when undefined) and waits for the
   * flushes of it under way, so a read sees every write stored or being stored.
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
    this.run(held.threadId, held.batches, held.fence);
  }

  /** Stores `batches` on their own and settles them with the outcome. */
  private run(threadId: string, batches: Batch[], fence: RunFence | undefined): void {
    let flushes = this.flushing.get(threadId);
    if (!flushes) {
      flushes = new Set();
      this.flushing.set(threadId, flushes);
    }
    const running = rowsOf(batches)
      .then((rows) => (rows.length > 0 ? this.store(rows, fence) : undefined))
      .then(
        () => {
          for (const batch of batches) batch.settle();
        },
        (error: unknown) => {
          // `guard` makes every failure of the store a StorageError.
          const failure =
            error instanceof Error
              ? error
              : new StorageError('STORAGE_ERROR', 'Cannot store checkpoint writes');
          for (const batch of batches) batch.settle(failure);
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
 * The batches' rows, one per `(task, idx)`, the first held: regular writes never overwrite a
 * stored one, and a statement must not carry the same key twice. A batch that could not be
 * serialized adds none (its `putWrites` rejected with that error already).
 */
async function rowsOf(batches: readonly Batch[]): Promise<WriteRow[]> {
  const all = (await Promise.all(batches.map((batch) => batch.rows))).flatMap((r) => r ?? []);
  const seen = new Set<string>();
  return all.filter((row) => {
    const key = `${row.taskId}\u0000${row.idx}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
