import type { CancelReason } from '../run-context';
import type { RunControlChannel } from './ports';

type CancelHandler = (reason: CancelReason) => void;

/** A `RunControlChannel` within one process: cancel requests reach the listeners registered here. */
export class InProcessRunControl implements RunControlChannel {
  private readonly handlers = new Map<string, Set<CancelHandler>>();

  listen(runId: string, onCancel: CancelHandler): () => void {
    let set = this.handlers.get(runId);
    if (!set) {
      set = new Set();
      this.handlers.set(runId, set);
    }
    // Wrapped so the same function registered twice is two registrations.
    const entry: CancelHandler = (reason) => onCancel(reason);
    set.add(entry);
    return () => {
      const current = this.handlers.get(runId);
      if (!current) return;
      current.delete(entry);
      if (current.size === 0) this.handlers.delete(runId);
    };
  }

  cancel(runId: string, reason: CancelReason): Promise<boolean> {
    const set = this.handlers.get(runId);
    if (!set) return Promise.resolve(false);
    for (const handler of [...set]) handler(reason);
    return Promise.resolve(true);
  }
}
