import type {
  ListSchedulesFilter,
  Message,
  Run,
  Schedule,
  ScheduleFire,
  ScheduleFireReason,
  Session,
  SessionConfig,
  StringMap,
} from '@cognition/contracts';
import {
  IdSchema,
  ListSchedulesFilterSchema,
  MultitaskStrategySchema,
  ScheduleMisfireSchema,
  ScheduleTargetSchema,
  StringMapSchema,
} from '@cognition/contracts';
import { z } from 'zod';
import { parseInput } from '../errors';
import { metadataMatches, scopeMatches } from '../scope';
import type { Scope } from '../scope';

/**
 * A schedule as the runtime stores it: every field already checked and `nextFireAt` computed
 * (the storage layer knows nothing of cron).
 */
export const NewScheduleSchema = z.strictObject({
  id: IdSchema,
  kind: z.enum(['cron', 'once']),
  expression: z.string().min(1).max(256).nullable(),
  timezone: z.string().min(1).max(64),
  runAt: z.date().nullable(),
  endTime: z.date().nullable(),
  enabled: z.boolean(),
  misfire: ScheduleMisfireSchema,
  target: ScheduleTargetSchema,
  content: z.string().min(1),
  metadata: StringMapSchema,
  callbackUrl: z.string().max(2048).nullable(),
  multitaskStrategy: MultitaskStrategySchema,
  nextFireAt: z.date().nullable(),
});
export type NewSchedule = z.input<typeof NewScheduleSchema>;

/** The fields a patch may replace (the runtime recomputes `nextFireAt` when timing changes). */
export const ScheduleUpdateSchema = NewScheduleSchema.pick({
  expression: true,
  timezone: true,
  endTime: true,
  enabled: true,
  misfire: true,
  content: true,
  metadata: true,
  callbackUrl: true,
  multitaskStrategy: true,
  nextFireAt: true,
}).partial();
export type ScheduleUpdate = z.input<typeof ScheduleUpdateSchema>;

/** What the runtime decides for a due schedule it claims (the storage layer knows no cron). */
export interface ClaimDecision {
  /** What `nextFireAt` becomes (null: nothing left to fire). */
  nextFireAt: Date | null;
  /** `scheduled`, or `misfire` when the occurrence is fired coalesced; null: skipped (no fire). */
  reason: Exclude<ScheduleFireReason, 'manual'> | null;
  /** The session the firing goes to, recorded on its fire from the claim on (known beforehand). */
  sessionId: string | null;
}

/** A claim of the due occurrences of many schedules at once (one pass of a node). */
export interface ClaimDueInput {
  /** The claim time (the fires' `claimedAt`). */
  now: Date;
  /**
   * Occurrences due up to this time are taken (default `now`): a node may claim a little
   * ahead of the due time (look-ahead) and start the run when it comes due.
   */
  dueBy?: Date;
  /** At most this many occurrences. */
  limit: number;
  nodeId: string;
  /** Called once per schedule being claimed (synchronously, inside the claim's transaction). */
  decide(schedule: Schedule): ClaimDecision;
}

/** One occurrence a node took: the schedule as it was when due, and what was decided. */
export interface ClaimedOccurrence extends ClaimDecision {
  schedule: Schedule;
  /** The schedule's `nextFireAt` when claimed: the fire's key with the schedule id. */
  dueAt: Date;
}

/** What a fire started (`ScheduleStore.recordRuns`). */
export interface FireRun {
  scheduleId: string;
  dueAt: Date;
  runId: string;
  sessionId: string;
  cleanup: ScheduleFire['cleanup'];
}

/**
 * A `new_session` firing to admit (`ScheduleStore.admitFirings`): its fire, the session it
 * creates (the id is derived from the occurrence), the queued run and the user message.
 */
export interface FiringAdmission {
  scheduleId: string;
  dueAt: Date;
  /** Recorded on the fire with its run (`pending`: the session goes once the run ended). */
  cleanup: ScheduleFire['cleanup'];
  /** The session's scope: the schedule's tenant. */
  scope: Scope;
  session: { id: string; agentName: string; config: SessionConfig; metadata: StringMap };
  run: {
    id: string;
    /** The user message's id (also the run's `inputMessageId` and pending input's). */
    messageId: string;
    idempotencyKey: string;
    callbackUrl: string | null;
    /** The run's initial claim (a node that starts it at once), as `runs.create` takes it. */
    ownerNode: string | null;
    leaseExpiresAt: Date | null;
  };
  message: { content: string; metadata: StringMap };
}

/** A firing `admitFirings` stored: its new session, its queued run and its user message. */
export interface AdmittedFiring {
  scheduleId: string;
  dueAt: Date;
  session: Session;
  run: Run;
  message: Message;
}

/**
 * Schedules (per tenant) and their firings.
 *
 * Invariants (proved by the conformance suite on every backend):
 * - `claimDue` is one transaction: of any number of concurrent claims on any number of
 *   processes, each due occurrence (same schedule, same `dueAt`) is returned by exactly one;
 *   the fire rows it adds (for a `reason` that is not null) are written in the same atomic step;
 *   a schedule another claim is taking is passed over, not waited for;
 * - at most one fire per `(scheduleId, dueAt)`;
 * - a schedule outside the caller's scope is treated exactly like a missing one;
 * - deleting a schedule deletes its fires.
 */
export interface ScheduleStore {
  create(input: NewSchedule, scope: Scope): Promise<Schedule>;
  /** null when missing or outside `scope`. */
  get(id: string, scope: Scope): Promise<Schedule | null>;
  /** Newest first (`createdAt`, then id). */
  list(scope: Scope, filter?: ListSchedulesFilter): Promise<{ items: Schedule[]; total: number }>;
  /** NOT_FOUND when missing or outside `scope`. */
  update(id: string, update: ScheduleUpdate, scope: Scope): Promise<Schedule>;
  /** false when missing or outside `scope`. Its fires go with it. */
  delete(id: string, scope: Scope): Promise<boolean>;
  /**
   * Takes up to `limit` due occurrences (enabled schedules with `nextFireAt <= now`, every
   * tenant, earliest first) in one transaction: each schedule's `nextFireAt` and `lastFiredAt`
   * move on as `decide` says and a fire row is added per occurrence that fires.
   */
  claimDue(input: ClaimDueInput): Promise<ClaimedOccurrence[]>;
  /** Records a manual firing ("trigger now"); CONFLICT when a fire has that due time. */
  addFire(fire: Omit<ScheduleFire, 'runId' | 'sessionId' | 'cleanup'>): Promise<void>;
  /** Records what a fire started; a missing fire (schedule deleted meanwhile) is ignored. */
  updateFire(
    scheduleId: string,
    dueAt: Date,
    update: Partial<Pick<ScheduleFire, 'runId' | 'sessionId' | 'cleanup'>>,
  ): Promise<void>;
  /**
   * Records the runs of many fires in one write (a pass's firings): each fire's run, session
   * and cleanup; a missing fire (schedule deleted meanwhile) is ignored.
   */
  recordRuns(fires: FireRun[]): Promise<void>;
  /**
   * Admits a pass's `new_session` firings in one transaction of a fixed number of statements:
   * per firing its session (with its scope and metadata), its `queued` run (holding the session,
   * with its pending input and usage record), its user message (the session's first) and the
   * run on its fire. A firing whose session id exists already is left out (its occurrence was
   * admitted before, or an earlier attempt created the session: the caller admits it the
   * ordinary way). Returns the firings admitted by this call, in input order.
   * @throws StorageError CONFLICT (e.g. a run id in use): nothing is stored.
   */
  admitFirings(firings: FiringAdmission[]): Promise<AdmittedFiring[]>;
  /**
   * Takes over a fire whose claimer died (no run yet): a conditional update on the `claimedAt`
   * it was listed with, so of several nodes taking it over one wins. false: another node did.
   */
  reclaimFire(fire: ScheduleFire, nodeId: string, now: Date): Promise<boolean>;
  /** A schedule's fires, newest due time first; [] when the schedule is missing or outside scope. */
  listFires(scheduleId: string, scope: Scope, limit: number): Promise<ScheduleFire[]>;
  /**
   * Fires of every tenant that need a node: claimed before `claimedBefore` without a run yet
   * and not given up (`cleanup: none`: the claimer died), or with `cleanup: pending`. Oldest
   * first. A fire without a run and `cleanup: done` was given up (its send was refused).
   */
  listUnsettledFires(claimedBefore: Date, limit: number): Promise<ScheduleFire[]>;
}

/** The schedule list filter checked, with its defaults. */
export function parseScheduleFilter(
  filter: ListSchedulesFilter | undefined,
): z.output<typeof ListSchedulesFilterSchema> {
  return parseInput(ListSchedulesFilterSchema, filter ?? {}, 'schedule filter');
}

/** Whether a schedule passes the caller's scope and the list filter (both backends use it). */
export function scheduleMatches(
  schedule: Schedule,
  scope: Scope,
  filter: z.output<typeof ListSchedulesFilterSchema>,
): boolean {
  if (!scopeMatches(scope, schedule.scope)) return false;
  if (filter.enabled !== undefined && schedule.enabled !== filter.enabled) return false;
  if (
    filter.sessionId !== undefined &&
    !(schedule.target.kind === 'session' && schedule.target.sessionId === filter.sessionId)
  ) {
    return false;
  }
  return metadataMatches(filter.metadata, schedule.metadata);
}

/** Newest first: `createdAt` descending, then id descending (the same on every backend). */
export function compareSchedules(a: Schedule, b: Schedule): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
