import type { AgentEventEnvelope } from '@cognition/contracts';

export type EventListener = (envelope: AgentEventEnvelope) => void;

/** Per-session listeners of an EventLog; a throwing listener never disturbs the others. */
export class ListenerSet {
  private readonly listeners = new Map<string, Set<EventListener>>();

  constructor(private readonly onListenerError: (error: unknown) => void) {}

  /** Returns the function that removes the listener (idempotent). */
  add(sessionId: string, listener: EventListener): () => void {
    let set = this.listeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.listeners.set(sessionId, set);
    }
    // Wrap so the same function subscribed twice is two independent subscriptions.
    const entry: EventListener = (envelope) => listener(envelope);
    set.add(entry);
    return () => {
      const current = this.listeners.get(sessionId);
      if (!current) return;
      current.delete(entry);
      if (current.size === 0) this.listeners.delete(sessionId);
    };
  }

  publish(envelope: AgentEventEnvelope): void {
    for (const listener of this.listeners.get(envelope.sessionId) ?? []) {
      try {
        listener(envelope);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }
}
