import type { SessionActivity } from '@cognition/contracts';
import type { Scope, StorageBackend } from '@cognition/storage';
import { scopeMatches } from '@cognition/storage';
import type { SessionEventBus } from './session-events';

/** Page size of a watch stream's replay from the activity log. */
const REPLAY_BATCH = 200;

export interface WatchOptions {
  sessionId?: string | undefined;
  afterId?: number | undefined;
  signal?: AbortSignal;
}

/**
 * The activity of the sessions `scope` sees (only `sessionId`'s when given) as it happens:
 * first the stored entries after `afterId` (when given), then live ones from the bus, each
 * once, in id order, until `signal` aborts or the consumer returns. The listener is registered
 * before the replay, so nothing written in between is lost.
 */
export async function* watchActivity(
  bus: SessionEventBus,
  storage: Pick<StorageBackend, 'activity'>,
  scope: Scope,
  options: WatchOptions,
): AsyncGenerator<SessionActivity, void, undefined> {
  const { sessionId, signal } = options;
  const buffered: SessionActivity[] = [];
  let wake: (() => void) | null = null;
  const stop = bus.on('*', (event) => {
    if (event.id <= 0 || event.scopes === null) return;
    if (sessionId !== undefined && event.sessionId !== sessionId) return;
    if (!scopeMatches(scope, event.scopes)) return;
    const { scopes: _scopes, ...entry } = event;
    buffered.push(entry);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    let last = 0;
    if (options.afterId !== undefined) {
      last = options.afterId;
      for (;;) {
        const batch = await storage.activity.listAfter(last, REPLAY_BATCH, scope, sessionId);
        for (const entry of batch) {
          last = entry.id;
          yield entry;
        }
        if (batch.length < REPLAY_BATCH) break;
      }
    }
    while (!signal?.aborted) {
      const entry = buffered.shift();
      if (entry) {
        // Entries the replay already gave are skipped.
        if (entry.id > last) {
          last = entry.id;
          yield entry;
        }
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
  } finally {
    stop();
    signal?.removeEventListener('abort', onAbort);
  }
}
