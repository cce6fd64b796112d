import type { CircuitState, StateChangeListener, Unsubscribe } from './types';

/**
 * A set of state-change listeners. Each subscription is distinct (subscribing one function twice
 * gives two subscriptions, each removed only by its own unsubscribe), and a throwing listener
 * neither stops the others nor reaches the code that caused the transition.
 */
export class ListenerSet {
  private readonly entries = new Set<{ listener: StateChangeListener }>();

  add(listener: StateChangeListener): Unsubscribe {
    const entry = { listener };
    this.entries.add(entry);
    return () => {
      this.entries.delete(entry);
    };
  }

  notify(
    name: string,
    from: CircuitState,
    to: CircuitState,
    onError: (error: unknown, name: string) => void,
  ): void {
    // A copy, so listeners that unsubscribe or subscribe while being notified do not disturb
    // this round.
    for (const { listener } of [...this.entries]) {
      try {
        listener(name, from, to);
      } catch (error) {
        try {
          onError(error, name);
        } catch {
          // The error reporter failed too; nothing is left to report to, and the transition
          // must still complete for the remaining listeners.
        }
      }
    }
  }
}
