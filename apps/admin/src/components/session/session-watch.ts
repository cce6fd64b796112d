import type { SessionActivity } from '@cognition/client';

/**
 * Whether an entry of `sessions.watch` changes what the sessions list shows. Every session
 * write through the pipeline ends with one `session.saved` (a create, an edit, a lifecycle
 * action, the status a finished run leaves — with its message count and cost); the other entries
 * of the same action (`loaded`, `action_executed`) and failed attempts change nothing stored.
 */
export function changesSessionList(entry: Pick<SessionActivity, 'type'>): boolean {
  return entry.type === 'session.saved';
}

/** What the list says about its live connection (`useSubscription`'s status). */
export function liveLabel(status: 'idle' | 'connecting' | 'pending' | 'error'): string {
  switch (status) {
    case 'pending':
      return 'Live: changes by any client show here as they happen';
    case 'connecting':
    case 'idle':
      return 'Connecting to live updates…';
    case 'error':
      return 'Live updates stopped; reload the page to see changes';
  }
}
