/** One root checkpoint of a thread, as retention sees it. */
export interface StoredCheckpointRef {
  checkpointId: string;
  /** When it was written. */
  createdAt: Date;
}

/** What a thread's checkpoints occupy: counts and the bytes of their serialized payloads. */
export interface CheckpointFootprint {
  checkpoints: number;
  writes: number;
  bytes: number;
}

/**
 * The storage side of checkpoint retention (root namespace only). Pruning never touches message
 * rows, the thread's other namespaces, or its head (the newest checkpoint).
 */
export interface CheckpointRetentionStore {
  /** The thread's root checkpoints, newest first (greatest id first). */
  list(threadId: string): Promise<StoredCheckpointRef[]>;
  /**
   * Deletes these root checkpoints of the thread with their pending writes, in one transaction,
   * except the thread's head at that moment (re-read inside the transaction). Ids already gone
   * are skipped, so several processes may prune one thread at once. Returns how many were deleted.
   */
  delete(threadId: string, checkpointIds: readonly string[]): Promise<number>;
  /** What the thread's checkpoints and writes (every namespace) occupy. */
  footprint(threadId: string): Promise<CheckpointFootprint>;
}
