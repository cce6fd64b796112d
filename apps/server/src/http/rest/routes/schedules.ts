import { ApiError, describeError } from '@cognition/api';
import { METADATA_QUERY_PREFIX } from '../schemas/common';
import type { RestRoute } from '../route';
import { defineRoute } from '../route';
import { BODY_ERRORS, CALLER_ERRORS, errorResponse, INVALID } from '../responses';
import {
  createScheduleInput,
  fireToBody,
  scheduleToBody,
  updateScheduleInput,
} from '../schedule-convert';
import {
  CreateScheduleBody,
  ListSchedulesQuery,
  ScheduleBody,
  ScheduleFireBody,
  ScheduleFireListBody,
  ScheduleIdParams,
  ScheduleListBody,
  ScheduleRunsQuery,
  UpdateScheduleBody,
} from '../schemas/schedules';

const SCHEDULE_NOT_FOUND = errorResponse("Schedule not found (or outside the caller's scope)");

/**
 * The procedures name the cron expression `expression`; on the REST wire it is `schedule`
 * (LangGraph's name), so a refusal names the field the caller sent.
 */
async function naming<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    const described = describeError(error);
    if (!described.issues?.some((issue) => issue.path === 'expression')) throw error;
    const issues = described.issues.map((issue) =>
      issue.path === 'expression' ? { ...issue, path: 'schedule' } : issue,
    );
    throw new ApiError(
      described.code,
      `Invalid body: ${issues.map((i) => `body.${i.path}: ${i.message}`).join('; ')}`,
      { issues },
    );
  }
}

/** Schedules: cron and delayed runs of the caller's tenant (docs/schedules.md). */
export const SCHEDULE_ROUTES: RestRoute[] = [
  defineRoute({
    method: 'post',
    path: '/schedules',
    operationId: 'createSchedule',
    summary: 'Create a schedule',
    description:
      'A cron schedule (`schedule` with `timezone`) or a single delayed run (`after_seconds` or ' +
      '`run_at`): exactly one of the three. Each firing sends `content` to the target: one ' +
      'session every firing continues, or a new session per firing. Each occurrence fires once ' +
      'across every node; occurrences missed while no node ran fire once (`misfire: run_once`) ' +
      'or not at all (`skip`).',
    tag: 'schedules',
    caller: 'required',
    request: {
      body: CreateScheduleBody,
      examples: {
        daily: {
          schedule: '30 2 * * *',
          timezone: 'Europe/Berlin',
          target: { kind: 'new_session', agent_name: 'default', on_run_completed: 'keep' },
          content: 'Write the daily report',
        },
        reminder: {
          after_seconds: 3600,
          target: { kind: 'session', session_id: 'a-session-id' },
          content: 'Remind me of the open questions',
        },
      },
    },
    responses: {
      201: { description: 'The created schedule', schema: ScheduleBody },
      ...CALLER_ERRORS,
      ...BODY_ERRORS,
      404: errorResponse("The target session was not found (or is outside the caller's scope)"),
      422: INVALID,
    },
    async handle({ api, body }) {
      const schedule = await naming(api.schedules.create(createScheduleInput(body)));
      return { status: 201, body: scheduleToBody(schedule) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/schedules',
    operationId: 'listSchedules',
    summary: 'List schedules',
    description:
      "The caller's schedules, newest first; filter by `enabled`, the target `session_id` and " +
      'metadata with `metadata.<key>=<value>` query parameters (all must match).',
    tag: 'schedules',
    caller: 'required',
    request: { query: ListSchedulesQuery, extraQueryPrefix: METADATA_QUERY_PREFIX },
    responses: {
      200: { description: 'One page of schedules and the total', schema: ScheduleListBody },
      ...CALLER_ERRORS,
      422: INVALID,
    },
    async handle({ api, query, extraQuery }) {
      const metadata: Record<string, string> = {};
      for (const [name, value] of Object.entries(extraQuery)) {
        if (Array.isArray(value)) {
          throw new ApiError('VALIDATION_ERROR', `Invalid query: ${name} is repeated`, {
            issues: [{ path: `query.${name}`, message: 'give each metadata predicate once' }],
          });
        }
        metadata[name.slice(METADATA_QUERY_PREFIX.length)] = value;
      }
      const page = await api.schedules.list({
        ...(query.enabled !== undefined ? { enabled: query.enabled === 'true' } : {}),
        ...(query.session_id !== undefined ? { sessionId: query.session_id } : {}),
        ...(query.limit !== undefined ? { limit: query.limit } : {}),
        ...(query.offset !== undefined ? { offset: query.offset } : {}),
        ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
      });
      return {
        status: 200,
        body: { schedules: page.items.map(scheduleToBody), total: page.total },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/schedules/{id}',
    operationId: 'getSchedule',
    summary: 'Get a schedule',
    tag: 'schedules',
    caller: 'required',
    request: { params: ScheduleIdParams },
    responses: {
      200: { description: 'The schedule', schema: ScheduleBody },
      ...CALLER_ERRORS,
      404: SCHEDULE_NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params }) {
      return { status: 200, body: scheduleToBody(await api.schedules.get({ id: params.id })) };
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/schedules/{id}',
    operationId: 'updateSchedule',
    summary: 'Update a schedule',
    description:
      'Enable or disable it, change its expression, time zone, end time or what a firing ' +
      'sends. A new timing, or enabling, restarts it from its next time after now.',
    tag: 'schedules',
    caller: 'required',
    request: {
      params: ScheduleIdParams,
      body: UpdateScheduleBody,
      examples: { disable: { enabled: false }, retime: { schedule: '0 9 * * 1-5' } },
    },
    responses: {
      200: { description: 'The schedule', schema: ScheduleBody },
      ...CALLER_ERRORS,
      ...BODY_ERRORS,
      404: SCHEDULE_NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params, body }) {
      const schedule = await naming(
        api.schedules.update({ id: params.id, ...updateScheduleInput(body) }),
      );
      return { status: 200, body: scheduleToBody(schedule) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/schedules/{id}',
    operationId: 'deleteSchedule',
    summary: 'Delete a schedule',
    description: 'With its record of firings; runs it started stay with their sessions.',
    tag: 'schedules',
    caller: 'required',
    request: { params: ScheduleIdParams },
    responses: {
      204: { description: 'Deleted' },
      ...CALLER_ERRORS,
      404: SCHEDULE_NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params }) {
      await api.schedules.delete({ id: params.id });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/schedules/{id}/runs',
    operationId: 'listScheduleRuns',
    summary: "List a schedule's runs",
    description: 'Its firings, newest due time first, each with the run it started.',
    tag: 'schedules',
    caller: 'required',
    request: { params: ScheduleIdParams, query: ScheduleRunsQuery },
    responses: {
      200: { description: 'The firings', schema: ScheduleFireListBody },
      ...CALLER_ERRORS,
      404: SCHEDULE_NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params, query }) {
      const fires = await api.schedules.runs({
        id: params.id,
        ...(query.limit !== undefined ? { limit: query.limit } : {}),
      });
      return { status: 200, body: { runs: fires.map(fireToBody) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/schedules/{id}/trigger',
    operationId: 'triggerSchedule',
    summary: 'Trigger a schedule now',
    description: 'Fires it once now, outside its times (a disabled schedule too).',
    tag: 'schedules',
    caller: 'required',
    request: { params: ScheduleIdParams },
    responses: {
      201: { description: 'The firing and its run', schema: ScheduleFireBody },
      ...CALLER_ERRORS,
      404: SCHEDULE_NOT_FOUND,
      409: errorResponse('The target session cannot take the message now'),
      422: INVALID,
    },
    async handle({ api, params }) {
      const fire = await api.schedules.trigger({ id: params.id });
      return { status: 201, body: fireToBody(fire) };
    },
  }),
];
