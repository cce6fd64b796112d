import { z } from 'zod';
import { IdSchema, StringMapSchema } from './common';
import { MESSAGE_CONTENT_MAX } from './sessions/message';
import { GraphRunKwargsSchema, MultitaskStrategySchema } from './runs/run';
import { AgentNameSchema, SessionConfigSchema } from './sessions/session';

/**
 * What a schedule does with occurrences that came due while no node ran (or while it was far
 * behind): `run_once` fires one run for all of them together, `skip` fires none; either way the
 * schedule then continues from its next time after now.
 */
export const ScheduleMisfireSchema = z.enum(['run_once', 'skip']);
export type ScheduleMisfire = z.infer<typeof ScheduleMisfireSchema>;

/** For a new session per firing: whether that session stays or is deleted once its run ended. */
export const OnRunCompletedSchema = z.enum(['keep', 'delete']);
export type OnRunCompleted = z.infer<typeof OnRunCompletedSchema>;

/**
 * A firing that runs a `langgraph.json` graph instead of sending a message: the kwargs of the
 * graph run each firing makes (input, config, context), as a thread run of the graph's
 * assistant takes them. The schedule's `content` is then only a description.
 */
const ScheduleGraphSchema = GraphRunKwargsSchema.optional();

/**
 * Where a firing's message goes: one existing session every firing continues (its history
 * grows), or a new session per firing, of `agentName`. With `graph`, a firing makes a run of
 * that graph on the session instead of sending `content` to its agent.
 */
export const ScheduleTargetSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('session'), sessionId: IdSchema, graph: ScheduleGraphSchema }),
  z.strictObject({
    kind: z.literal('new_session'),
    agentName: AgentNameSchema.default('default'),
    config: SessionConfigSchema.default({}),
    onRunCompleted: OnRunCompletedSchema.default('keep'),
    graph: ScheduleGraphSchema,
  }),
]);
export type ScheduleTarget = z.output<typeof ScheduleTargetSchema>;

/** A cron expression: 5 fields, or 6 with seconds first. Checked in full by the runtime. */
export const CronExpressionSchema = z.string().trim().min(1).max(256);
/** An IANA time zone name (checked by the runtime against the zones this Node knows). */
export const TimeZoneSchema = z.string().min(1).max(64);

/**
 * A stored schedule. `cron` schedules fire at every time of `expression` in `timezone`;
 * `once` schedules fire a single time at `runAt`. `nextFireAt` is the next occurrence not yet
 * claimed (null: nothing left to fire — ended, or a one-shot that fired). Every occurrence is
 * claimed by exactly one node: the claim moves `nextFireAt` on only if it still holds the
 * occurrence (see `ScheduleStore.claimDue`).
 */
export interface Schedule {
  id: string;
  /** The tenant's scope, fixed at creation (like a session's). */
  scope: Record<string, string>;
  kind: 'cron' | 'once';
  /** The cron expression (`cron`), null for `once`. */
  expression: string | null;
  timezone: string;
  /** The one time a `once` schedule fires; null for `cron`. */
  runAt: Date | null;
  /** No occurrence after this time fires; null: none. */
  endTime: Date | null;
  enabled: boolean;
  misfire: ScheduleMisfire;
  target: ScheduleTarget;
  /** The message each firing sends. */
  content: string;
  metadata: Record<string, string>;
  /** Our signed completion callback, POSTed when each firing's run ends. */
  callbackUrl: string | null;
  /** What a firing does when the target session is busy (default `enqueue`). */
  multitaskStrategy: z.infer<typeof MultitaskStrategySchema>;
  nextFireAt: Date | null;
  /** The due time of the last occurrence claimed. */
  lastFiredAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One firing of a schedule: an occurrence claimed (or a manual trigger) and the run it started. */
export interface ScheduleFire {
  scheduleId: string;
  /** The occurrence's due time (for a manual trigger: when it was triggered). */
  dueAt: Date;
  /** When a node claimed it. */
  claimedAt: Date;
  /** The node that claimed it. */
  nodeId: string;
  /** `scheduled`, `misfire` (one coalesced run for occurrences missed) or `manual`. */
  reason: ScheduleFireReason;
  /** null until the run is created (a node that died in between leaves it to another). */
  runId: string | null;
  sessionId: string | null;
  /**
   * `pending` while the session of an `onRunCompleted: delete` firing awaits deletion; `done`
   * on a fire without a run: given up (the target session was gone, the send was refused).
   */
  cleanup: 'none' | 'pending' | 'done';
}

export const ScheduleFireReasonSchema = z.enum(['scheduled', 'misfire', 'manual']);
export type ScheduleFireReason = z.infer<typeof ScheduleFireReasonSchema>;

/**
 * What a caller sends to create a schedule (every transport derives its input from this one
 * schema). Exactly one of `expression`, `afterSeconds`, `runAt`.
 */
export const CreateScheduleFieldsSchema = z
  .strictObject({
    expression: CronExpressionSchema.optional(),
    timezone: TimeZoneSchema.default('UTC'),
    /** A single delayed run this many seconds from now. */
    afterSeconds: z
      .number()
      .int()
      .min(0)
      .max(366 * 24 * 3600)
      .optional(),
    /** A single run at this time. */
    runAt: z.coerce.date().optional(),
    endTime: z.coerce.date().nullable().optional(),
    enabled: z.boolean().default(true),
    misfire: ScheduleMisfireSchema.default('run_once'),
    target: ScheduleTargetSchema,
    content: z.string().min(1).max(MESSAGE_CONTENT_MAX),
    metadata: StringMapSchema.default({}),
    callbackUrl: z
      .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
      .max(2048)
      .nullable()
      .optional(),
    multitaskStrategy: MultitaskStrategySchema.default('enqueue'),
  })
  .superRefine((value, ctx) => {
    const given = [value.expression, value.afterSeconds, value.runAt].filter(
      (v) => v !== undefined,
    ).length;
    if (given !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['expression'],
        message: 'give exactly one of expression, afterSeconds or runAt',
      });
    }
  });
export type CreateScheduleFields = z.input<typeof CreateScheduleFieldsSchema>;

/** A patch: enable/disable, change the expression, its zone, the end time, content, metadata. */
export const PatchScheduleFieldsSchema = z.strictObject({
  expression: CronExpressionSchema.optional(),
  timezone: TimeZoneSchema.optional(),
  endTime: z.coerce.date().nullable().optional(),
  enabled: z.boolean().optional(),
  misfire: ScheduleMisfireSchema.optional(),
  content: z.string().min(1).max(MESSAGE_CONTENT_MAX).optional(),
  metadata: StringMapSchema.optional(),
  callbackUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
    .max(2048)
    .nullable()
    .optional(),
  multitaskStrategy: MultitaskStrategySchema.optional(),
});
export type PatchScheduleFields = z.input<typeof PatchScheduleFieldsSchema>;

/** Filters of a schedule list. */
export const ListSchedulesFilterSchema = z.strictObject({
  enabled: z.boolean().optional(),
  /** Schedules whose target is this session. */
  sessionId: IdSchema.optional(),
  /** Exact matches on metadata keys. */
  metadata: StringMapSchema.optional(),
  limit: z.number().int().min(1).max(500).default(50),
  offset: z.number().int().min(0).default(0),
});
export type ListSchedulesFilter = z.input<typeof ListSchedulesFilterSchema>;
