import {
  CronExpressionSchema,
  IdSchema,
  MESSAGE_CONTENT_MAX,
  MultitaskStrategySchema,
  OnRunCompletedSchema,
  ScheduleFireReasonSchema,
  ScheduleMisfireSchema,
  StringMapSchema,
  TimeZoneSchema,
  AgentNameSchema,
} from '@cognition/contracts';
import { z } from 'zod';
import { queryInt, Timestamp, TimestampInput } from './common';
import { RunBody } from './runs';
import { SessionConfigBody } from './sessions';

/*
 * Schedules' wire shapes (snake_case). The fields are the contract's (`CreateScheduleFieldsSchema`,
 * checked again by the procedure and the runtime), so REST and tRPC accept the same values.
 */

const CallbackUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
  .max(2048)
  .nullable();

export const ScheduleTargetBody = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('session'),
      session_id: IdSchema.meta({ description: 'Every firing continues this session' }),
    }),
    z.strictObject({
      kind: z.literal('new_session'),
      agent_name: AgentNameSchema.optional().meta({ description: 'Default: `default`' }),
      config: SessionConfigBody.optional(),
      on_run_completed: OnRunCompletedSchema.optional().meta({
        description: 'keep (default) or delete the session once its run ended',
      }),
    }),
  ])
  .meta({ id: 'ScheduleTarget', description: 'Where each firing sends its message' });

export const CreateScheduleBody = z
  .strictObject({
    schedule: CronExpressionSchema.optional().meta({
      description:
        'Cron expression: 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first',
    }),
    timezone: TimeZoneSchema.optional().meta({ description: 'IANA time zone (default UTC)' }),
    after_seconds: z
      .number()
      .int()
      .min(0)
      .max(366 * 24 * 3600)
      .optional()
      .meta({ description: 'A single delayed run this many seconds from now' }),
    run_at: TimestampInput.optional().meta({ description: 'A single run at this time' }),
    end_time: TimestampInput.nullable().optional().meta({
      description: 'No occurrence after this time fires',
    }),
    enabled: z.boolean().optional(),
    misfire: ScheduleMisfireSchema.optional().meta({
      description:
        'Occurrences missed while no node ran: run_once (default, one coalesced run) or skip',
    }),
    target: ScheduleTargetBody,
    content: z.string().min(1).max(MESSAGE_CONTENT_MAX).meta({
      description: 'The message each firing sends',
    }),
    metadata: StringMapSchema.optional(),
    callback_url: CallbackUrl.optional().meta({
      description: 'Receives our signed completion POST when each firing’s run ends',
    }),
    multitask_strategy: MultitaskStrategySchema.optional().meta({
      description: 'When the target session is busy (default enqueue)',
    }),
  })
  .meta({ id: 'CreateSchedule' });

export const UpdateScheduleBody = z
  .strictObject({
    schedule: CronExpressionSchema.optional(),
    timezone: TimeZoneSchema.optional(),
    end_time: TimestampInput.nullable().optional(),
    enabled: z.boolean().optional(),
    misfire: ScheduleMisfireSchema.optional(),
    content: z.string().min(1).max(MESSAGE_CONTENT_MAX).optional(),
    metadata: StringMapSchema.optional(),
    callback_url: CallbackUrl.optional(),
    multitask_strategy: MultitaskStrategySchema.optional(),
  })
  .meta({ id: 'UpdateSchedule' });

export const ScheduleIdParams = z.object({ id: IdSchema.meta({ description: 'Schedule id' }) });

export const ListSchedulesQuery = z
  .object({
    enabled: z.enum(['true', 'false']).optional(),
    session_id: IdSchema.optional().meta({ description: 'Schedules targeting this session' }),
    limit: queryInt(1, 500, 'Page size (default 50)').optional(),
    offset: queryInt(0, 1_000_000_000, 'Schedules to skip').optional(),
  })
  .strict();

export const ScheduleBody = z
  .object({
    id: IdSchema,
    kind: z.enum(['cron', 'once']),
    schedule: z.string().nullable(),
    timezone: z.string(),
    run_at: Timestamp.nullable(),
    end_time: Timestamp.nullable(),
    enabled: z.boolean(),
    misfire: ScheduleMisfireSchema,
    target: ScheduleTargetBody,
    content: z.string(),
    metadata: StringMapSchema,
    callback_url: z.string().nullable(),
    multitask_strategy: MultitaskStrategySchema,
    next_fire_at: Timestamp.nullable().meta({ description: 'null: nothing left to fire' }),
    last_fired_at: Timestamp.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Schedule' });

export const ScheduleListBody = z
  .object({ schedules: z.array(ScheduleBody), total: z.number().int().min(0) })
  .meta({ id: 'ScheduleList' });

export const ScheduleFireBody = z
  .object({
    schedule_id: IdSchema,
    due_at: Timestamp,
    claimed_at: Timestamp,
    node_id: z.string(),
    reason: ScheduleFireReasonSchema,
    run_id: IdSchema.nullable(),
    session_id: IdSchema.nullable(),
    cleanup: z.enum(['none', 'pending', 'done']),
    run: RunBody.nullable().meta({ description: 'null: not started, given up, or deleted' }),
  })
  .meta({ id: 'ScheduleFire' });

export const ScheduleRunsQuery = z
  .object({ limit: queryInt(1, 500, 'How many, newest first (default 50)').optional() })
  .strict();

export const ScheduleFireListBody = z
  .object({ runs: z.array(ScheduleFireBody) })
  .meta({ id: 'ScheduleFireList' });

export type ScheduleBodyT = z.infer<typeof ScheduleBody>;
export type ScheduleFireBodyT = z.infer<typeof ScheduleFireBody>;
