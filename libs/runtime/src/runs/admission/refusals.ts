import type { MultitaskStrategy, Run, Session } from '@cognition/contracts';
import { MAX_PENDING_RUNS } from '@cognition/contracts';
import { RuntimeError } from '../../errors';
import { refuseNonPublicHost } from '../../net/public-address';

/* What admission refuses, worded with what the caller can do about it. */

export const NOT_ACCEPTING: readonly Session['status'][] = ['suspended', 'completed', 'failed'];

/**
 * The answer to a send the session cannot take now (it has an active run, runs waiting, or the
 * limit of waiting runs), worded with what the caller can do about it. A run waiting for a
 * decision gets its own answer, which names the run to resume.
 */
export function runInProgress(sessionId: string, cause?: unknown): RuntimeError {
  return new RuntimeError(
    'RUN_IN_PROGRESS',
    `A run is in progress on session ${sessionId}: wait for its terminal event, abort it, or send with multitaskStrategy enqueue, interrupt or rollback`,
    cause === undefined ? {} : { cause },
  );
}

/** CONFLICT for a session that accepts no messages (suspended, completed, failed). */
export function refuseClosed(session: Session): void {
  if (NOT_ACCEPTING.includes(session.status)) {
    throw new RuntimeError(
      'CONFLICT',
      `Session ${session.id} is ${session.status} and accepts no messages`,
    );
  }
}

/**
 * The strategy of a send while the session is busy (an active run or runs waiting): refused
 * under `reject`, beyond the waiting limit, and whatever the strategy while a run waits for a
 * decision on its tool calls (they need an answer before the thread takes another input).
 */
export function busyStrategy(
  requested: MultitaskStrategy | undefined,
  session: Session,
  active: Run | null,
  waiting: number,
): MultitaskStrategy {
  if (active?.status === 'requires_action') {
    throw new RuntimeError(
      'RUN_IN_PROGRESS',
      `Session ${session.id} has run ${active.id} waiting for a decision on its tool calls: resume it (POST /sessions/${session.id}/runs/${active.id}/resume) or abort it`,
    );
  }
  const strategy = requested ?? 'reject';
  if (strategy === 'reject' || waiting >= MAX_PENDING_RUNS) throw runInProgress(session.id);
  return strategy;
}

/**
 * Refuses a callback into the server's own network unless the configuration allows it
 * (`allowPrivate`). @throws RuntimeError VALIDATION_ERROR naming `callbackUrl`.
 */
export async function checkCallbackHost(callbackUrl: string, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  // Refused here, where the caller can still be told; delivery checks again (DNS changes).
  // A host that does not resolve now is accepted: that may pass, and delivery retries.
  const refused = await refuseNonPublicHost(new URL(callbackUrl));
  if (refused?.kind === 'non-public') {
    throw RuntimeError.field(
      'callbackUrl',
      `${refused.message}; callbacks into the server's own network are not allowed by its configuration`,
    );
  }
}
