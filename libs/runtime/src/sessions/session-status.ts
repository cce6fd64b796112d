import type { Session } from '@cognition/contracts';
import { RuntimeError } from '../errors';

/* The status rules every session action checks (CONFLICT when the session is in the wrong state). */

/** An action's optimistic check: the write happens only while the stored version is this one. */
export type Versioned = { expectedVersion?: number | undefined };

/** Statuses a session ends in (`endedAt` is stamped on entering them). */
export const TERMINAL = new Set<Session['status']>(['completed', 'failed']);

/** CONFLICT unless the session's status is one of `from`, worded with the statuses that apply. */
export function requireStatus(session: Session, action: string, from: Session['status'][]): void {
  if (!from.includes(session.status)) {
    throw new RuntimeError(
      'CONFLICT',
      `Cannot ${action} session ${session.id}: it is ${session.status} (${action} applies to ${from.join(' or ')} sessions)`,
    );
  }
}

/** CONFLICT for a session that has ended (completed or failed). */
export function requireNotTerminal(session: Session, action: string): void {
  if (TERMINAL.has(session.status)) {
    throw new RuntimeError(
      'CONFLICT',
      `Cannot ${action} session ${session.id}: it is ${session.status}`,
    );
  }
}
