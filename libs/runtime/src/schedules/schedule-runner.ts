import { createHash } from 'node:crypto';
import type {
  Run,
  Schedule,
  ScheduleFire,
  ScheduleFireReason,
  Session,
} from '@cognition/contracts';
import type { Span } from '@opentelemetry/api';
import type { ClaimDecision, ClaimedOccurrence, StorageBackend } from '@cognition/storage';
import type { Logger } from '../logger';
import { inScheduleFireSpan, setScheduleFireOutcome } from '../telemetry/spans';
import type {
  FiringOutcome,
  FiringSend,
  GraphSendInput,
  SendInput,
  SendOptions,
  SendResult,
} from '../runs/admission/send-input';
import type { ScheduleObserver } from './schedule-observer';
import { NOOP_SCHEDULE_OBSERVER } from './schedule-observer';
import type { Clock } from './schedule-times';
import { nextOccurrence, SYSTEM_CLOCK } from './schedule-times';

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

/** Errors that a retry cannot cure: the firing is given up (logged, counted as failed). */
const PERMANENT = new Set([
  'VALIDATION_ERROR',
  'SESSION_NOT_FOUND',
  'NOT_FOUND',
  'CONFLICT',
  'RUN_IN_PROGRESS',
]);

/**
 * The id of the session a `new_session` firing creates: the same on every retry of it. A UUID
 * (name-based, version 5 layout, from the schedule id and the due time), so the LangGraph API,
 * whose thread ids are UUIDs, serves the thread a cron's firing made.
 */
export function firingSessionId(scheduleId: string, dueAt: Date): string {
  const hash = createHash('sha1').update(`${scheduleId}:${dueAt.toISOString()}`).digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

interface FireOptions {
  /** A refused send is thrown (trigger now) rather than only logged and counted. */
  throwOnFailure: boolean;
  /** The fire row names its session already (a claim records it). */
  named: boolean;
  /** The caller records the run (a pass, for all its firings in one write). */
  recordLater?: boolean;
  /** When the firing's span starts (the claim), if not now. */
  startTime?: number;
}

/** The session a firing's message goes to: a `new_session` one is created with this id. */
function targetSessionId(schedule: Schedule, dueAt: Date): string {
  const { target } = schedule;
  return target.kind === 'session' ? target.sessionId : firingSessionId(schedule.id, dueAt);
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
  private readonly observer: ScheduleObserver;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** Occurrences claimed ahead of their due time, earliest first, and when their pass began. */
  private readonly upcoming: { c: ClaimedOccurrence; claimedFrom: number }[] = [];
  private draining: Promise<void> | undefined;
  private stopped = true;

  constructor(private readonly o: ScheduleRunnerOptions) {
    this.clock = o.clock ?? SYSTEM_CLOCK;
    this.observer = o.observer ?? NOOP_SCHEDULE_OBSERVER;
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
    while (this.draining) await this.draining;
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
   * due now, then settles fires that need a node. An occurrence claimed ahead waits in
   * `upcoming` and fires when due (`drain`), so the next pass need not wait for it. True when
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
    if (later.length > 0) {
      this.upcoming.push(...later.map((c) => ({ c, claimedFrom })));
      this.upcoming.sort((a, b) => a.c.dueAt.getTime() - b.c.dueAt.getTime());
      this.drain();
    }
    const due = claimed.filter((c) => c.dueAt.getTime() <= nowMs);
    await this.fireGroup(due.map((c) => ({ c, claimedFrom })));
    await this.settle(now);
    return claimed.length >= batch;
  }

  /**
   * Fires the occurrences claimed ahead as they come due: each time the earliest left is due,
   * every one due by then together. One loop at a time; `stop` waits for it.
   */
  private drain(): void {
    if (this.draining) return;
    this.draining = (async () => {
      while (this.upcoming.length > 0) {
        await this.untilFirstDue();
        const now = this.clock.now().getTime();
        const later = this.upcoming.findIndex((u) => u.c.dueAt.getTime() > now);
        const group = this.upcoming.splice(0, later === -1 ? this.upcoming.length : later);
        try {
          await this.fireGroup(group);
        } catch (error) {
          // Their fires stay without a run: taken over after the claim timeout.
          this.o.logger.error({ err: error }, 'scheduler firings failed');
        }
      }
    })().finally(() => {
      this.draining = undefined;
      if (this.upcoming.length > 0) this.drain();
    });
  }

  /** Resolves once the earliest occurrence waiting in `upcoming` is due. */
  private async untilFirstDue(): Promise<void> {
    for (;;) {
      const first = this.upcoming[0];
      if (!first) return;
      const left = first.c.dueAt.getTime() - this.clock.now().getTime();
      if (left <= 0) return;
      // Re-read at least every 50 ms: an injected clock moves, an earlier claim may arrive.
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, 50)));
    }
  }

  /**
   * Fires claimed occurrences that are due: the `new_session` ones admitted together
   * (`admitFirings`), the others one by one, whose runs are then recorded in one write (a fire
   * left without its run by a failure here is taken over after `claimTimeoutMs` and finds its
   * run by idempotency key).
   */
  private async fireGroup(group: { c: ClaimedOccurrence; claimedFrom: number }[]): Promise<void> {
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
      Promise.allSettled(single.map((c) => this.takeOccurrence(c, claimedFrom))),
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
        const fire = await this.takeOccurrence(c, claimedFrom);
        if (fire) sentAlone.push(fire);
        continue;
      }
      if (reason === 'misfire') this.observer.misfired(c.schedule.misfire);
      const span = { scheduleId: c.schedule.id, dueAt: c.dueAt, reason, nodeId: this.o.nodeId };
      if ('error' in outcome) {
        await this.givenUp(c.schedule.id, c.dueAt, reason, outcome.error, claimedFrom);
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

  /** A firing that cannot succeed: given up (logged, counted, its fire settled). */
  private async givenUp(
    scheduleId: string,
    dueAt: Date,
    reason: ScheduleFireReason,
    error: unknown,
    startTime: number,
  ): Promise<void> {
    await this.o.storage.schedules.updateFire(scheduleId, dueAt, { cleanup: 'done' });
    this.observer.failed(reason);
    const span = { scheduleId, dueAt, reason, nodeId: this.o.nodeId, startTime };
    await inScheduleFireSpan(span, (s) => {
      setScheduleFireOutcome(s, { outcome: 'failed', error });
      return Promise.resolve();
    });
    this.o.logger.warn({ err: error, scheduleId, dueAt }, 'schedule firing refused: given up');
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
    return this.fire(schedule, now, 'manual', { throwOnFailure: true, named: false });
  }

  /** Fires a claimed occurrence; its fire when it started a run still to be recorded. */
  private async takeOccurrence(
    claimed: ClaimedOccurrence,
    claimedFrom: number,
  ): Promise<ScheduleFire | null> {
    const { schedule, dueAt, reason: decided } = claimed;
    const reason: ScheduleFireReason = decided ?? 'misfire';
    if (reason === 'misfire') this.observer.misfired(schedule.misfire);
    if (decided === null) {
      const span = { scheduleId: schedule.id, dueAt, reason, nodeId: this.o.nodeId };
      await inScheduleFireSpan({ ...span, startTime: claimedFrom }, (s) => {
        setScheduleFireOutcome(s, { outcome: 'skipped' });
        return Promise.resolve();
      });
      this.o.logger.info({ scheduleId: schedule.id, dueAt }, 'missed schedule occurrence skipped');
      return null;
    }
    const fire = await this.fire(schedule, dueAt, reason, {
      throwOnFailure: false,
      named: true,
      recordLater: true,
      startTime: claimedFrom,
    });
    return fire.runId === null ? null : fire;
  }

  /**
   * Starts the run of a claimed fire (again, for a fire whose claimer died), in the firing's
   * span (from `startTime`, the claim, when given).
   */
  private fire(
    schedule: Schedule,
    dueAt: Date,
    reason: ScheduleFireReason,
    options: FireOptions,
  ): Promise<ScheduleFire> {
    const { startTime } = options;
    const fire = { scheduleId: schedule.id, dueAt, reason, nodeId: this.o.nodeId };
    return inScheduleFireSpan(
      { ...fire, ...(startTime !== undefined ? { startTime } : {}) },
      (span) => this.fireInSpan(schedule, dueAt, reason, options, span),
    );
  }

  private async fireInSpan(
    schedule: Schedule,
    dueAt: Date,
    reason: ScheduleFireReason,
    { throwOnFailure, named, recordLater }: FireOptions,
    span: Span,
  ): Promise<ScheduleFire> {
    const { storage } = this.o;
    try {
      const { sessionId, created } = await this.targetSession(schedule, dueAt, named);
      const { run } = await this.sendFiring(schedule, dueAt, sessionId, created);
      const deleteAfter =
        schedule.target.kind === 'new_session' && schedule.target.onRunCompleted === 'delete';
      const settled = {
        runId: run.id,
        sessionId,
        cleanup: deleteAfter ? ('pending' as const) : ('none' as const),
      };
      if (!recordLater) await storage.schedules.updateFire(schedule.id, dueAt, settled);
      const lagMs = Math.max(0, run.createdAt.getTime() - dueAt.getTime());
      this.observer.fired(reason, lagMs);
      setScheduleFireOutcome(span, {
        outcome: reason === 'misfire' ? 'misfire' : 'fired',
        lagMs,
        runId: run.id,
        sessionId,
      });
      return { ...this.fireOf(schedule.id, dueAt, reason), ...settled };
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      if (!PERMANENT.has(code)) throw error;
      // Retrying cannot help (the target session is gone, the run was refused): given up.
      await storage.schedules.updateFire(schedule.id, dueAt, { cleanup: 'done' });
      this.observer.failed(reason);
      setScheduleFireOutcome(span, { outcome: 'failed', error });
      this.o.logger.warn(
        { err: error, scheduleId: schedule.id, dueAt },
        'schedule firing refused: given up',
      );
      if (throwOnFailure) throw error;
      return { ...this.fireOf(schedule.id, dueAt, reason), cleanup: 'done' };
    }
  }

  /**
   * The firing's run: the schedule's message sent to the session, or, with a `graph` target,
   * a run of that graph with the schedule's kwargs. Either carries the idempotency key
   * `schedule:<id>:<due time>`, so a retried firing finds its run.
   */
  private async sendFiring(
    schedule: Schedule,
    dueAt: Date,
    sessionId: string,
    created: Session | null,
  ): Promise<{ run: Run }> {
    const idempotencyKey = `schedule:${schedule.id}:${dueAt.toISOString()}`;
    const { graph } = schedule.target;
    if (graph !== undefined) {
      if (!this.o.sendGraph) {
        throw Object.assign(new Error('graph runs are not served by this node'), {
          code: 'VALIDATION_ERROR',
        });
      }
      return this.o.sendGraph({
        sessionId,
        scope: schedule.scope,
        kwargs: graph,
        idempotencyKey,
        multitaskStrategy: schedule.multitaskStrategy,
        ...(schedule.callbackUrl ? { callbackUrl: schedule.callbackUrl } : {}),
      });
    }
    return this.o.send(
      {
        sessionId,
        scope: schedule.scope,
        content: schedule.content,
        metadata: {
          ...schedule.metadata,
          schedule_id: schedule.id,
          schedule_due_at: dueAt.toISOString(),
        },
        callbackUrl: schedule.callbackUrl,
        idempotencyKey,
        multitaskStrategy: schedule.multitaskStrategy,
      },
      created ? { newSession: created } : {},
    );
  }

  private fireOf(scheduleId: string, dueAt: Date, reason: ScheduleFireReason): ScheduleFire {
    return {
      scheduleId,
      dueAt,
      claimedAt: this.clock.now(),
      nodeId: this.o.nodeId,
      reason,
      runId: null,
      sessionId: null,
      cleanup: 'none',
    };
  }

  /**
   * The session the firing's message goes to; a `new_session` one is created (once), and is
   * `created` when this attempt created it (its id is derived from the occurrence: a node
   * that takes the fire over finds it). The fire names it from then on (a claimed fire does
   * from its claim: `named`).
   */
  private async targetSession(
    schedule: Schedule,
    dueAt: Date,
    named: boolean,
  ): Promise<{ sessionId: string; created: Session | null }> {
    const { target } = schedule;
    if (target.kind === 'session') return { sessionId: target.sessionId, created: null };
    const { storage } = this.o;
    const id = firingSessionId(schedule.id, dueAt);
    let created: Session | null = null;
    try {
      created = await storage.sessions.create(
        {
          id,
          agentName: target.agentName,
          config: target.config,
          metadata: { ...schedule.metadata, schedule_id: schedule.id },
        },
        schedule.scope,
      );
    } catch (error) {
      // Created by an earlier attempt of this firing (a claimer that died): use it.
      if (!(
        (error as { code?: string }).code === 'CONFLICT' && (await storage.sessions.get(id, {}))
      ))
        throw error;
    }
    if (!named) await storage.schedules.updateFire(schedule.id, dueAt, { sessionId: id });
    return { sessionId: id, created };
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
            await this.fire(schedule, fire.dueAt, fire.reason, {
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
