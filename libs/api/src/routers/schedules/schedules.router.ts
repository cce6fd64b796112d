import { publicProcedure, router } from '../../trpc';
import {
  createScheduleHandler,
  deleteScheduleHandler,
  getScheduleHandler,
  listSchedulesHandler,
  scheduleRunsHandler,
  triggerScheduleHandler,
  updateScheduleHandler,
} from './schedules.handlers';
import {
  CreateScheduleApiInputSchema,
  ListSchedulesApiInputSchema,
  ScheduleIdInputSchema,
  ScheduleRunsApiInputSchema,
  UpdateScheduleApiInputSchema,
} from './schemas';

/** Cron and delayed-run schedules of the caller's tenant (docs/schedules.md). */
export const schedulesRouter = router({
  create: publicProcedure.input(CreateScheduleApiInputSchema).mutation(createScheduleHandler),
  list: publicProcedure.input(ListSchedulesApiInputSchema).query(listSchedulesHandler),
  get: publicProcedure.input(ScheduleIdInputSchema).query(getScheduleHandler),
  update: publicProcedure.input(UpdateScheduleApiInputSchema).mutation(updateScheduleHandler),
  delete: publicProcedure.input(ScheduleIdInputSchema).mutation(deleteScheduleHandler),
  runs: publicProcedure.input(ScheduleRunsApiInputSchema).query(scheduleRunsHandler),
  trigger: publicProcedure.input(ScheduleIdInputSchema).mutation(triggerScheduleHandler),
});
