import { publicProcedure, router } from '../../trpc';
import { abortRunHandler } from './abort.handler';
import { runEventsHandler } from './events.handler';
import { getRunHandler } from './get.handler';
import { listRunsHandler } from './list.handler';
import { resumeRunHandler } from './resume.handler';
import {
  GetRunApiInputSchema,
  ListRunsApiInputSchema,
  ResumeRunApiInputSchema,
  RunEventsApiInputSchema,
  RunSessionInputSchema,
} from './schemas';

export const runsRouter = router({
  abort: publicProcedure.input(RunSessionInputSchema).mutation(abortRunHandler),
  resume: publicProcedure.input(ResumeRunApiInputSchema).mutation(resumeRunHandler),
  list: publicProcedure.input(ListRunsApiInputSchema).query(listRunsHandler),
  get: publicProcedure.input(GetRunApiInputSchema).query(getRunHandler),
  events: publicProcedure.input(RunEventsApiInputSchema).subscription(runEventsHandler),
});
