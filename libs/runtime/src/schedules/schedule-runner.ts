import type { Run, Schedule, ScheduleFire } from '@cognition/contracts';
import type { ClaimDecision, StorageBackend } from '@cognition/storage';
import type { Logger } from '../logger';
import type {
  FiringOutcome,
  FiringSend,
  GraphSendInput,
  SendInput,
  SendOptions,
  SendResult,
} from '../runs/admission/send-input';
import { FiringBatch } from './firing-batch';
import { ScheduleFiring, targetSessionId } from './schedule-firing';
import type { ScheduleObserver } from './schedule-observer';
import { NOOP_SCHEDULE_OBSERVER } from './schedule-observer';
import type { Clock } from './schedule-times';
import { nextOccurrence, SYSTEM_CLOCK } from './schedule-times';
import { UpcomingFirings } from './upcoming-firings';

export { firingSessionId } from './schedule-firing';

export interface ScheduleRunnerOptions {
  storage: StorageBackend;
  /** The run admission (`RunManager.scheduler.send`): a firing is a send like any other. */
  send(input: SendInput, options?: SendOptions): Promise<SendResult>;
  /**
   * The admission of a graph run (`RunManager.scheduler.sendGraph`): a schedule whose target has
   * `graph` fires through it, one firing at a time (never through `admitFirings`).
   */
  sendGraph?(input: GraphSendInput): Promise<{ run: Run; created: boolean }>;
  /**
   * The batch admission of `new_session` firings (`RunScheduler.admitFirings`): a pass's are
   * admitted together in one storage write. Without it every firing goes through `send`.
   */
  admitFirings?(firings: FiringSend[]): Promise<FiringOutcome[]>;
  /** Deletes a session the way the API does (cancel, release the sandbox, delete the rows). */
  deleteSession(sessionId: string): Promise<void>;
  nodeId: string;
  clock?: Clock;
  /** How often the loop looks for due occurrences (default 250 ms). */
  pollMs?: number;
  /**
   * An occurrence found more than this late counts as missed (no node ran when it came due):
   * it is handled per the schedule's `misfire`, coalesced with every other missed time
   * (default 10 s).
   */
  misfireGraceMs?: number;
  /** A fire claimed this long ago without a run is taken over: its claimer died (default 30 s). */
  claimTimeoutMs?: number;
  /** Occurrences taken per pass (default 100). */
  batch?: number;
  /**
   * How long before its due time a pass may claim an occurrence (default 0): the pass then
   * waits for the due time and admits it at once, instead of the next poll finding it due.
   * A firing never starts before its due time; a claimer that dies meanwhile leaves a fire
   * without a run, taken over after `claimTimeoutMs` like any other. At most `claimTimeoutMs`
   * minus a second.
   */
  lookAheadMs?: number;
  logger: Logger;
  observer?: ScheduleObserver;
}

/**
 * The scheduler loop of one node. Every node runs one; the database decides which node fires
 * an occurrence (`ScheduleStore.claim`), so no node coordinates with another.
 *
 * A firing is idempotent from its claim on: the session of a `new_session` target has an id
 * derived from the occurrence, and the send carries the idempotency key
 * `schedule:<id>:<due time>`, so a node that takes over the fire of a dead claimer (no run after
 * `claimTimeoutMs`) creates neither a second session nor a second run. Once the run exists it is
 * covered by the run's lease like any other run.
 */
export class ScheduleRunner {
  private readonly clock: Clock;
  private readonly firing: ScheduleFiring;
  private readonly batch: FiringBatch;
  /** Occurrences claimed ahead of their due time: they fire when due. */
  private readonly upcoming: UpcomingFirings;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(private readonly o: ScheduleRunnerOptions) {
    this.clock = o.clock ?? SYSTEM_CLOCK;
    const observer = o.observer ?? NOOP_SCHEDULE_OBSERVER;
    this.firing = new ScheduleFiring(o, this.clock, observer);
    this.batch = new FiringBatch(o, this.firing, observer);
    this.upcoming = new UpcomingFirings(
      this.clock,
      (group) => this.batch.fireGroup(group),
      o.logger,
    );
  }

  /** Starts the loop (a pass right away, then every `pollMs`). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /**
   * Stops the loop and waits for the pass in progress and for the occurrences it claimed ahead
   * (they fire when due: at most the look-ahead away).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.upcoming.settled();
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      let more = false;
      this.running = this.tick()
        .then((full) => {
          more = full;
        })
        .catch((error: unknown) => this.o.logger.error({ err: error }, 'scheduler pass failed'))
        .finally(() => {
          this.running = undefined;
          // A full batch: more is due right now, so the next pass does not wait for the poll.
          if (!this.stopped) this.schedule(more ? 0 : (this.o.pollMs ?? 250));
        });
    }, delayMs);
    this.timer.unref();
  }

  /**
   * One pass: claims what is due (and, with look-ahead, what comes due shortly), fires what is
   * due now (`FiringBatch`), then settles fires that need a node. An occurrence claimed ahead
   * waits in `upcoming` and fires when due (`UpcomingFirings`), so the next pass need not wait
   * for it. True when
   * the claim was a full batch (more may be waiting).
   */
  async tick(): Promise<boolean> {
    const now = this.clock.now();
    const batch = this.o.batch ?? 100;
    const claimedFrom = Date.now();
    const claimTimeoutMs = this.o.claimTimeoutMs ?? 30_000;
    const lookAheadMs = Math.max(0, Math.min(this.o.lookAheadMs ?? 0, claimTimeoutMs - 1000));
    // One transaction claims the whole batch (look-ahead: also what comes due shortly).
    const claimed = await this.o.storage.schedules.claimDue({
      now,
      dueBy: new Date(now.getTime() + lookAheadMs),
      limit: batch,
      nodeId: this.o.nodeId,
      decide: (schedule) => this.decide(schedule, now),
    });
    const nowMs = this.clock.now().getTime();
    const later = claimed.filter((c) => c.dueAt.getTime() > nowMs);
    this.upcoming.add(later.map((c) => ({ c, claimedFrom })));
    const due = claimed.filter((c) => c.dueAt.getTime() <= nowMs);
    await this.batch.fireGroup(due.map((c) => ({ c, claimedFrom })));
    await this.settle(now);
    return claimed.length >= batch;
  }

  /**
   * A missed occurrence (found later than the grace) is coalesced with every other missed one:
   * the schedule continues from its next time after now, never with a burst of what it missed.
   */
  private decide(schedule: Schedule, now: Date): ClaimDecision {
    const dueAt = schedule.nextFireAt ?? now;
    const missed = now.getTime() - dueAt.getTime() > (this.o.misfireGraceMs ?? 10_000);
    const nextFireAt = nextOccurrence(schedule, missed ? now : dueAt);
    const sessionId = targetSessionId(schedule, dueAt);
    if (!missed) return { nextFireAt, reason: 'scheduled', sessionId };
    return { nextFireAt, reason: schedule.misfire === 'skip' ? null : 'misfire', sessionId };
  }

  /** Fires a schedule now, outside its times ("trigger now"); returns the fire. */
  async trigger(schedule: Schedule): Promise<ScheduleFire> {
    const now = this.clock.now();
    const fire = {
      scheduleId: schedule.id,
      dueAt: now,
      claimedAt: now,
      nodeId: this.o.nodeId,
      reason: 'manual' as const,
    };
    await this.o.storage.schedules.addFire(fire);
    return this.firing.fire(schedule, now, 'manual', { throwOnFailure: true, named: false });
  }

  /**
   * Fires that need a node: claimed long ago without a run (the claimer died: fired again,
   * idempotently), or whose session is to be deleted once its run ended.
   */
  private async settle(now: Date): Promise<void> {
    const { storage } = this.o;
    const before = new Date(now.getTime() - (this.o.claimTimeoutMs ?? 30_000));
    for (const fire of await storage.schedules.listUnsettledFires(before, this.o.batch ?? 100)) {
      try {
        if (fire.runId === null) {
          // One node takes it over (the others find the claim moved on), then fires it again.
          if (!(await storage.schedules.reclaimFire(fire, this.o.nodeId, now))) continue;
          const schedule = await storage.schedules.get(fire.scheduleId, {});
          if (schedule)
            await this.firing.fire(schedule, fire.dueAt, fire.reason, {
              throwOnFailure: false,
              named: fire.sessionId !== null,
            });
        } else if (fire.cleanup === 'pending') {
          await this.cleanUp(fire);
        }
      } catch (error) {
        this.o.logger.warn(
          { err: error, scheduleId: fire.scheduleId },
          'schedule fire not settled',
        );
      }
    }
  }

  private async cleanUp(fire: ScheduleFire): Promise<void> {
    const { storage } = this.o;
    const run = fire.runId ? await storage.runs.get(fire.runId) : null;
    if (run && !['completed', 'failed', 'aborted', 'interrupted'].includes(run.status)) return;
    if (fire.sessionId) await this.o.deleteSession(fire.sessionId);
    await storage.schedules.updateFire(fire.scheduleId, fire.dueAt, { cleanup: 'done' });
  }
}
