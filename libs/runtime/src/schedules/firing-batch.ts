import type { ScheduleFire, ScheduleFireReason } from '@cognition/contracts';
import type { ClaimedOccurrence, StorageBackend } from '@cognition/storage';
import { inScheduleFireSpan, setScheduleFireOutcome } from '../telemetry/spans';
import type { FiringOutcome, FiringSend } from '../runs/admission/send-input';
import type { ScheduleFiring } from './schedule-firing';
import { firingSessionId } from './schedule-firing';
import type { ScheduleObserver } from './schedule-observer';

/** A claimed occurrence and when the pass that claimed it began (its span starts there). */
export interface ClaimedFiring {
  c: ClaimedOccurrence;
  claimedFrom: number;
}

/** What firing a claimed batch needs of the runner's options. */
export interface FiringBatchOptions {
  storage: StorageBackend;
  /** The batch admission of `new_session` firings (`RunScheduler.admitFirings`), if any. */
  admitFirings?(firings: FiringSend[]): Promise<FiringOutcome[]>;
  nodeId: string;
}

/** Fires a batch of claimed occurrences that are due (see `fireGroup`). */
export class FiringBatch {
  constructor(
    private readonly o: FiringBatchOptions,
    /** Fires one occurrence (those not admitted together, and a batch's left-overs). */
    private readonly firing: ScheduleFiring,
    private readonly observer: ScheduleObserver,
  ) {}

  /**
   * Fires claimed occurrences that are due: the `new_session` ones admitted together
   * (`admitFirings`), the others one by one, whose runs are then recorded in one write (a fire
   * left without its run by a failure here is taken over after `claimTimeoutMs` and finds its
   * run by idempotency key).
   */
  async fireGroup(group: ClaimedFiring[]): Promise<void> {
    if (group.length === 0) return;
    const claimedFrom = Math.min(...group.map((g) => g.claimedFrom));
    const occurrences = group.map((g) => g.c);
    const batched = this.o.admitFirings
      ? occurrences.filter(
          (c) =>
            c.reason !== null &&
            c.schedule.target.kind === 'new_session' &&
            c.schedule.target.graph === undefined,
        )
      : [];
    const single = occurrences.filter((c) => !batched.includes(c));
    const [outcomes, batchOutcome] = await Promise.all([
      Promise.allSettled(single.map((c) => this.firing.takeOccurrence(c, claimedFrom))),
      this.admitGroup(batched, claimedFrom).then(
        (left) => ({ left, error: null }),
        (error: unknown) => ({
          left: [] as ScheduleFire[],
          error: error instanceof Error ? error : new Error(String(error)),
        }),
      ),
    ]);
    await this.o.storage.schedules.recordRuns(
      [
        ...outcomes.flatMap((o) => (o.status === 'fulfilled' && o.value ? [o.value] : [])),
        ...batchOutcome.left,
      ].flatMap((f) =>
        f.runId && f.sessionId ? [{ ...f, runId: f.runId, sessionId: f.sessionId }] : [],
      ),
    );
    const failed = outcomes.find((o) => o.status === 'rejected');
    if (failed) throw failed.reason;
    if (batchOutcome.error) throw batchOutcome.error;
  }

  private async admitGroup(
    group: ClaimedOccurrence[],
    claimedFrom: number,
  ): Promise<ScheduleFire[]> {
    if (!this.o.admitFirings || group.length === 0) return [];
    const outcomes = await this.o.admitFirings(group.map((c) => this.firingSend(c)));
    const sentAlone: ScheduleFire[] = [];
    for (const [i, c] of group.entries()) {
      const outcome = outcomes[i] ?? null;
      const reason: ScheduleFireReason = c.reason ?? 'misfire';
      if (outcome === null) {
        // Its session exists (an earlier attempt of this firing): sent the ordinary way.
        const fire = await this.firing.takeOccurrence(c, claimedFrom);
        if (fire) sentAlone.push(fire);
        continue;
      }
      if (reason === 'misfire') this.observer.misfired(c.schedule.misfire);
      const span = { scheduleId: c.schedule.id, dueAt: c.dueAt, reason, nodeId: this.o.nodeId };
      if ('error' in outcome) {
        await this.firing.givenUp(c.schedule.id, c.dueAt, reason, outcome.error, claimedFrom);
        continue;
      }
      const { run } = outcome;
      const lagMs = Math.max(0, run.createdAt.getTime() - c.dueAt.getTime());
      this.observer.fired(reason, lagMs);
      await inScheduleFireSpan({ ...span, startTime: claimedFrom }, (s) => {
        setScheduleFireOutcome(s, {
          outcome: reason === 'misfire' ? 'misfire' : 'fired',
          lagMs,
          runId: run.id,
          sessionId: run.sessionId,
        });
        return Promise.resolve();
      });
    }
    return sentAlone;
  }

  /** The batch admission's input for a claimed `new_session` occurrence. */
  private firingSend(c: ClaimedOccurrence): FiringSend {
    const { schedule, dueAt } = c;
    const { target } = schedule;
    if (target.kind !== 'new_session') throw new Error('a new_session target expected');
    return {
      scheduleId: schedule.id,
      dueAt,
      scope: schedule.scope,
      session: {
        id: firingSessionId(schedule.id, dueAt),
        agentName: target.agentName,
        config: target.config,
        metadata: { ...schedule.metadata, schedule_id: schedule.id },
      },
      content: schedule.content,
      metadata: {
        ...schedule.metadata,
        schedule_id: schedule.id,
        schedule_due_at: dueAt.toISOString(),
      },
      callbackUrl: schedule.callbackUrl,
      idempotencyKey: `schedule:${schedule.id}:${dueAt.toISOString()}`,
      cleanup: target.onRunCompleted === 'delete' ? 'pending' : 'none',
    };
  }
}
