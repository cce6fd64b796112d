import type { ApiServices } from '@cognition/api';
import type { Run, Session } from '@cognition/contracts';
import { STATELESS_KEY } from './wire';

/**
 * The threads of stateless runs (docs/langgraph-api.md, "Stateless runs"): a thread made for
 * one run and deleted once it ended, unless the run said `on_completion: keep`. Which thread is
 * one is recorded with it, in the same database (its metadata), when it is made — so the
 * clean-up does not depend on the node that made it:
 *
 * - a background run's thread (`POST /runs`, `/runs/batch`; mark `delete`) is deleted by the
 *   node where its run stops executing (`RunManager.onRunStopped`): the node that made it, or
 *   the one that took the run up after that node died;
 * - a streamed or awaited run's thread (mark `after_answer`) is deleted by the node answering,
 *   once it answered (the answer is the thread's values);
 * - every node sweeps what either left behind (a node that died before or while deleting, a
 *   run ended by recovery rather than executed): a marked thread whose runs all ended at least
 *   `SWEEP_GRACE_MS` ago, or that has had no run for that long, goes.
 */

export type StatelessMark = 'delete' | 'after_answer';

/** How long a swept thread's runs must have ended (or it must have had none). */
const SWEEP_GRACE_MS = 30_000;
/** How often a node sweeps. */
const SWEEP_INTERVAL_MS = 30_000;
const SWEEP_BATCH = 100;

/** Still to end: a run that may yet execute (a pause for a decision has not ended). */
const OPEN: ReadonlySet<Run['status']> = new Set([
  'pending',
  'queued',
  'running',
  'requires_action',
]);

export interface StatelessLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

export class StatelessThreads {
  constructor(
    private readonly services: ApiServices,
    private readonly logger: StatelessLogger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The session metadata that marks a thread as a stateless run's. */
  static mark(mark: StatelessMark): Record<string, string> {
    return { [STATELESS_KEY]: mark };
  }

  /**
   * Deletes `sessionId` if it is a stateless run's thread whose runs all ended: a background
   * one at once (`sweep: false`), any one once the grace has passed (`sweep: true`). Answers
   * whether it went. Never throws (a failure is logged; the sweep tries again).
   */
  async cleanUp(sessionId: string, o: { sweep: boolean }): Promise<boolean> {
    try {
      const session = await this.services.storage.sessions.get(sessionId, {});
      const mark = session?.metadata[STATELESS_KEY];
      if (!session || (mark !== 'delete' && !(o.sweep && mark === 'after_answer'))) return false;
      const runs = await this.services.storage.runs.list(session.id);
      if (runs.some((run) => OPEN.has(run.status))) return false;
      if (o.sweep && !this.settled(session, runs)) return false;
      if (!o.sweep && runs.length === 0) return false;
      await this.delete(session);
      return true;
    } catch (error) {
      this.logger.warn({ err: error, sessionId }, 'deleting a stateless run thread failed');
      return false;
    }
  }

  /** One sweep over the marked threads (every tenant's); answers how many went. */
  async sweep(): Promise<number> {
    let deleted = 0;
    for (const mark of ['delete', 'after_answer'] as const) {
      const page = await this.services.storage.sessions.list(
        { limit: SWEEP_BATCH, offset: 0, metadata: StatelessThreads.mark(mark) },
        {},
      );
      for (const session of page.sessions) {
        if (await this.cleanUp(session.id, { sweep: true })) deleted += 1;
      }
    }
    return deleted;
  }

  /** Sweeps every `SWEEP_INTERVAL_MS` on this node (unref'd: it keeps no process alive). */
  start(): void {
    let sweeping = false;
    const timer = setInterval(() => {
      if (sweeping) return;
      sweeping = true;
      this.sweep()
        .catch((error: unknown) => {
          this.logger.warn({ err: error }, 'sweeping stateless run threads failed');
        })
        .finally(() => {
          sweeping = false;
        });
    }, SWEEP_INTERVAL_MS);
    timer.unref();
  }

  private settled(session: Session, runs: readonly Run[]): boolean {
    const ended = runs.map((run) => (run.finishedAt ?? run.updatedAt).getTime());
    const last = Math.max(session.createdAt.getTime(), ...ended);
    return this.now() - last >= SWEEP_GRACE_MS;
  }

  /** The session's own delete, as `DELETE /threads/{id}` does it (run, events, sandbox, rows). */
  private async delete(session: Session): Promise<void> {
    await this.services.runs.forgetSession(session.id);
    await this.services.sandbox?.release(session.id);
    await this.services.storage.sessions.delete(session.id, session.scopes);
  }
}
