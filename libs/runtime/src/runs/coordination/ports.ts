import type { CancelReason } from '../run-context';

/**
 * Admission of runs into execution: at most `limit` hold a slot at once, the others wait in
 * order. `RunSlots` is the in-process implementation; a cluster-wide one (e.g. Redis) keeps the
 * same contract so the run code does not change.
 */
export interface RunQueue {
  /**
   * Resolves with the function that gives the slot back (call it exactly once; later calls do
   * nothing), or with null when `signal` aborted before a slot was granted (the run never started).
   */
  acquire(signal: AbortSignal): Promise<(() => void) | null>;
  /** Runs holding a slot now (as far as this process knows). */
  readonly active: number;
  /** Runs waiting for a slot. */
  readonly queued: number;
  readonly limit: number;
}

/**
 * Carries "cancel this run" from whoever asks (an abort request, a session delete) to the process
 * that executes the run. `InProcessRunControl` is the single-process implementation; a
 * distributed one (e.g. Redis pub/sub) delivers to the node that registered the run.
 */
export interface RunControlChannel {
  /**
   * Registers this process as the executor of `runId`: `onCancel` receives every cancel request
   * for it until the returned function is called (idempotent).
   */
  listen(runId: string, onCancel: (reason: CancelReason) => void): () => void;
  /** Asks the executor of `runId` to cancel it; resolves true when an executor received it. */
  cancel(runId: string, reason: CancelReason): Promise<boolean>;
}
