import type { SessionActivity, SessionEventType, StringMap } from '@cognition/contracts';

/**
 * One event of the session pipeline, as in-process listeners receive it: the activity-log entry
 * (`id` 0 when it could not be persisted: the session does not exist) plus the session's scopes,
 * so a listener can tell which callers may see it.
 */
export interface SessionEvent extends SessionActivity {
  /** The session's scopes; null when the session could not be loaded. */
  scopes: StringMap | null;
}

export type SessionEventListener = (event: SessionEvent) => void;

/**
 * The typed listener registry of the session pipeline: `on('session.saved', fn)` or `on('*', fn)`
 * for every event. A throwing listener is isolated (reported to `onListenerError`), never
 * breaking the pipeline or the other listeners.
 */
export class SessionEventBus {
  private readonly listeners = new Map<SessionEventType | '*', Set<SessionEventListener>>();

  constructor(private readonly onListenerError: (error: unknown) => void = () => undefined) {}

  /** Registers `listener`; returns the function that removes it. */
  on(type: SessionEventType | '*', listener: SessionEventListener): () => void {
    let set = this.listeners.get(type);
    if (!set) {
      set = new Set();
      this.listeners.set(type, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  emit(event: SessionEvent): void {
    for (const key of [event.type, '*'] as const) {
      for (const listener of [...(this.listeners.get(key) ?? [])]) {
        try {
          listener(event);
        } catch (error) {
          this.onListenerError(error);
        }
      }
    }
  }
}
