import type { z } from 'zod';
import type { ApiContext } from '../../context';
import { ApiError } from '../../errors';
import type { ScheduleApi } from '../../services/schedule-service';
import type {
  CreateScheduleApiInputSchema,
  ListSchedulesApiInputSchema,
  ScheduleIdInput,
  ScheduleRunsApiInputSchema,
  UpdateScheduleApiInputSchema,
} from './schemas';

interface Call<I> {
  ctx: ApiContext;
  input: I;
}

function schedulesOf(ctx: ApiContext): ScheduleApi {
  const { schedules } = ctx.services;
  if (!schedules) throw new ApiError('UNAVAILABLE', 'Schedules are not enabled on this server');
  return schedules;
}

/** Every handler passes the caller's scope: another tenant's schedule is a 404. */
export const createScheduleHandler = ({
  ctx,
  input,
}: Call<z.output<typeof CreateScheduleApiInputSchema>>) =>
  schedulesOf(ctx).create(input, ctx.caller.scope);

export const listSchedulesHandler = ({
  ctx,
  input,
}: Call<z.output<typeof ListSchedulesApiInputSchema>>) =>
  schedulesOf(ctx).list(ctx.caller.scope, input);

export const getScheduleHandler = ({ ctx, input }: Call<ScheduleIdInput>) =>
  schedulesOf(ctx).get(input.id, ctx.caller.scope);

export const updateScheduleHandler = ({
  ctx,
  input,
}: Call<z.output<typeof UpdateScheduleApiInputSchema>>) => {
  const { id, ...patch } = input;
  return schedulesOf(ctx).patch(id, patch, ctx.caller.scope);
};

export async function deleteScheduleHandler({
  ctx,
  input,
}: Call<ScheduleIdInput>): Promise<{ deleted: true }> {
  await schedulesOf(ctx).delete(input.id, ctx.caller.scope);
  return { deleted: true };
}

export const scheduleRunsHandler = ({
  ctx,
  input,
}: Call<z.output<typeof ScheduleRunsApiInputSchema>>) =>
  schedulesOf(ctx).fires(input.id, ctx.caller.scope, input.limit);

export const triggerScheduleHandler = ({ ctx, input }: Call<ScheduleIdInput>) =>
  schedulesOf(ctx).trigger(input.id, ctx.caller.scope);
