import type { PendingCallback } from '@cognition/storage';
import { StorageError } from '@cognition/storage';
import { clone } from '../clone';

/** The memory backend's pending completion-callback deliveries, by delivery id. */
export class MemoryPendingCallbacks {
  private readonly deliveries = new Map<string, PendingCallback>();

  constructor(private readonly runExists: (runId: string) => boolean) {}

  save(input: PendingCallback): Promise<void> {
    if (!this.runExists(input.runId)) {
      return Promise.reject(new StorageError('RUN_NOT_FOUND', `Run not found: ${input.runId}`));
    }
    if (this.deliveries.has(input.deliveryId)) {
      return Promise.reject(
        new StorageError('CONFLICT', `Callback delivery already exists: ${input.deliveryId}`),
      );
    }
    this.deliveries.set(input.deliveryId, clone(input));
    return Promise.resolve();
  }

  claim(deliveryId: string, attempt: number): Promise<boolean> {
    const delivery = this.deliveries.get(deliveryId);
    if (!delivery || delivery.attempts !== attempt - 1) return Promise.resolve(false);
    delivery.attempts = attempt;
    return Promise.resolve(true);
  }

  settle(deliveryId: string, nextAttemptAt: Date | null): Promise<void> {
    const delivery = this.deliveries.get(deliveryId);
    if (nextAttemptAt === null) this.deliveries.delete(deliveryId);
    else if (delivery) delivery.nextAttemptAt = new Date(nextAttemptAt);
    return Promise.resolve();
  }

  list(): Promise<PendingCallback[]> {
    return Promise.resolve(
      [...this.deliveries.values()]
        .sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime())
        .map((d) => clone(d)),
    );
  }

  /** Forgets the deliveries of a deleted run. */
  deleteRun(runId: string): void {
    for (const [id, delivery] of this.deliveries)
      if (delivery.runId === runId) this.deliveries.delete(id);
  }
}
