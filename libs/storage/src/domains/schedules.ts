import type {
  ListSchedulesFilter,
  Schedule,
  ScheduleFire,
  ScheduleFireReason,
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

/** One occurrence a node wants to take: it holds only while `nextFireAt` is still `dueAt`. */
export interface ScheduleClaim {
  scheduleId: string;
  /** The `nextFireAt` the node read. */
  dueAt: Date;
  /** What `nextFireAt` becomes (null: nothing left to fire). */
  nextFireAt: Date | null;
  nodeId: string;
  now: Date;
  /** `scheduled`, or `misfire` when the occurrence is fired coalesced; null: skipped (no fire). */
  reason: Exclude<ScheduleFireReason, 'manual'> | null;
}

/**
 * Schedules (per tenant) and their firings.
 *
 * Invariants (proved by the conformance suite on every backend):
 * - `claim` is one conditional write: of any number of concurrent claims of one occurrence
 *   (same schedule, same `dueAt`), on any number of processes, exactly one returns true;
 *   the fire row it adds (when `reason` is not null) is written in the same atomic step;
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
  /** Enabled schedules with `nextFireAt <= now`, every tenant, earliest first. */
  listDue(now: Date, limit: number): Promise<Schedule[]>;
  /** Takes one occurrence; false when another claim took it, or the schedule changed. */
  claim(claim: ScheduleClaim): Promise<boolean>;
  /** Records a manual firing ("trigger now"); CONFLICT when a fire has that due time. */
  addFire(fire: Omit<ScheduleFire, 'runId' | 'sessionId' | 'cleanup'>): Promise<void>;
  /** Records what a fire started; a missing fire (schedule deleted meanwhile) is ignored. */
  updateFire(
    scheduleId: string,
    dueAt: Date,
    update: Partial<Pick<ScheduleFire, 'runId' | 'sessionId' | 'cleanup'>>,
  ): Promise<void>;
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
