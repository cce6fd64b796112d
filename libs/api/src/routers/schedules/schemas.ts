import {
  CreateScheduleFieldsSchema,
  IdSchema,
  ListSchedulesFilterSchema,
  PatchScheduleFieldsSchema,
} from '@cognition/contracts';
import { z } from 'zod';

/** Inputs are strict: an unknown field is a 422, never silently dropped. */
export const CreateScheduleApiInputSchema = CreateScheduleFieldsSchema;

/** Optional as a whole: `schedules.list()` is the first page. */
export const ListSchedulesApiInputSchema = ListSchedulesFilterSchema.prefault({});

export const ScheduleIdInputSchema = z.strictObject({ id: IdSchema });
export type ScheduleIdInput = z.output<typeof ScheduleIdInputSchema>;

export const UpdateScheduleApiInputSchema = PatchScheduleFieldsSchema.extend({ id: IdSchema });

export const ScheduleRunsApiInputSchema = z.strictObject({
  id: IdSchema,
  limit: z.number().int().min(1).max(500).default(50),
});
