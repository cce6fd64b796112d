import { createHash } from 'node:crypto';
import type {
  Run,
  Schedule,
  ScheduleFire,
  ScheduleFireReason,
  Session,
} from '@cognition/contracts';
import type { Span } from '@opentelemetry/api';
import type { ClaimedOccurrence, StorageBackend } from '@cognition/storage';
import type { Logger } from '../logger';
import { inScheduleFireSpan, setScheduleFireOutcome } from '../telemetry/spans';
import type {
  GraphSendInput,
  SendInput,
  SendOptions,
  SendResult,
} from '../runs/admission/send-input';
import type { ScheduleObserver } from './schedule-observer';
import type { Clock } from './schedule-times';

/** What firing one occurrence needs of the runner's options. */
export interface ScheduleFiringOptions {
  storage: StorageBackend;
  /** The run admission (`RunManager.scheduler.send`): a firing is a send like any other. */
  send(input: SendInput, options?: SendOptions): Promise<SendResult>;
  /** The admission of a graph run (`RunManager.scheduler.sendGraph`), for a `graph` target. */
  sendGraph?(input: GraphSendInput): Promise<{ run: Run; created: boolean }>;
  nodeId: string;
  logger: Logger;
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

export interface FireOptions {
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
export function targetSessionId(schedule: Schedule, dueAt: Date): string {
  const { target } = schedule;
  return target.kind === 'session' ? target.sessionId : firingSessionId(schedule.id, dueAt);
}

/**
 * Fires one occurrence of a schedule: its session (a `new_session` target's created once, with
 * an id derived from the occurrence), its run through the admission with the idempotency key
 * `schedule:<id>:<due time>`, the fire settled, the firing's span and the observer told. A
 * refusal a retry cannot cure gives the firing up.
 */
export class ScheduleFiring {
  constructor(
    private readonly o: ScheduleFiringOptions,
    private readonly clock: Clock,
    private readonly observer: ScheduleObserver,
  ) {}

  /** Fires a claimed occurrence; its fire when it started a run still to be recorded. */
  async takeOccurrence(
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

  /** A firing that cannot succeed: given up (logged, counted, its fire settled). */
  async givenUp(
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
   * Starts the run of a claimed fire (again, for a fire whose claimer died), in the firing's
   * span (from `startTime`, the claim, when given).
   */
  fire(
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
}
