import type { ScheduleFireWithRun } from '@cognition/api';
import type {
  CreateScheduleFields,
  PatchScheduleFields,
  Schedule,
  ScheduleTarget,
} from '@cognition/contracts';
import type { z } from 'zod';
import { configFromBody, configToBody, runToBody } from './convert';
import type {
  CreateScheduleBody,
  ScheduleBodyT,
  ScheduleFireBodyT,
  ScheduleTargetBody,
  UpdateScheduleBody,
} from './schemas/schedules';

/* Schedules between the REST wire (snake_case; the expression is `schedule`) and the contract. */

type TargetInput = CreateScheduleFields['target'];

function targetFromBody(body: z.output<typeof ScheduleTargetBody>): TargetInput {
  if (body.kind === 'session') return { kind: 'session', sessionId: body.session_id };
  return {
    kind: 'new_session',
    ...(body.agent_name !== undefined ? { agentName: body.agent_name } : {}),
    ...(body.config !== undefined ? { config: configFromBody(body.config) } : {}),
    ...(body.on_run_completed !== undefined ? { onRunCompleted: body.on_run_completed } : {}),
  };
}

function targetToBody(target: ScheduleTarget): z.output<typeof ScheduleTargetBody> {
  if (target.kind === 'session') return { kind: 'session', session_id: target.sessionId };
  return {
    kind: 'new_session',
    agent_name: target.agentName,
    config: configToBody(target.config),
    on_run_completed: target.onRunCompleted,
  };
}

/** Fields both the create and the patch bodies have. */
function commonFields(body: z.output<typeof UpdateScheduleBody>): PatchScheduleFields {
  return {
    ...(body.schedule !== undefined ? { expression: body.schedule } : {}),
    ...(body.timezone !== undefined ? { timezone: body.timezone } : {}),
    ...(body.end_time !== undefined ? { endTime: body.end_time } : {}),
    ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    ...(body.misfire !== undefined ? { misfire: body.misfire } : {}),
    ...(body.content !== undefined ? { content: body.content } : {}),
    ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
    ...(body.callback_url !== undefined ? { callbackUrl: body.callback_url } : {}),
    ...(body.multitask_strategy !== undefined
      ? { multitaskStrategy: body.multitask_strategy }
      : {}),
  };
}

export function createScheduleInput(
  body: z.output<typeof CreateScheduleBody>,
): CreateScheduleFields {
  return {
    ...commonFields(body),
    content: body.content,
    target: targetFromBody(body.target),
    ...(body.after_seconds !== undefined ? { afterSeconds: body.after_seconds } : {}),
    ...(body.run_at !== undefined ? { runAt: body.run_at } : {}),
  };
}

export function updateScheduleInput(body: z.output<typeof UpdateScheduleBody>) {
  return commonFields(body);
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

export function scheduleToBody(schedule: Schedule): ScheduleBodyT {
  return {
    id: schedule.id,
    kind: schedule.kind,
    schedule: schedule.expression,
    timezone: schedule.timezone,
    run_at: iso(schedule.runAt),
    end_time: iso(schedule.endTime),
    enabled: schedule.enabled,
    misfire: schedule.misfire,
    target: targetToBody(schedule.target),
    content: schedule.content,
    metadata: schedule.metadata,
    callback_url: schedule.callbackUrl,
    multitask_strategy: schedule.multitaskStrategy,
    next_fire_at: iso(schedule.nextFireAt),
    last_fired_at: iso(schedule.lastFiredAt),
    created_at: schedule.createdAt.toISOString(),
    updated_at: schedule.updatedAt.toISOString(),
  };
}

export function fireToBody(fire: ScheduleFireWithRun): ScheduleFireBodyT {
  return {
    schedule_id: fire.scheduleId,
    due_at: fire.dueAt.toISOString(),
    claimed_at: fire.claimedAt.toISOString(),
    node_id: fire.nodeId,
    reason: fire.reason,
    run_id: fire.runId,
    session_id: fire.sessionId,
    cleanup: fire.cleanup,
    run: fire.run ? runToBody(fire.run) : null,
  };
}
