import { publicProcedure, router } from '../../trpc';
import { sessionContextHandler } from './context.handler';
import { createSessionHandler } from './create.handler';
import { deleteSessionHandler } from './delete.handler';
import { getSessionHandler } from './get.handler';
import { listSessionsHandler } from './list.handler';
import {
  CreateSessionApiInputSchema,
  ListSessionsApiInputSchema,
  SessionIdInputSchema,
  UpdateSessionApiInputSchema,
} from './schemas';
import { updateSessionHandler } from './update.handler';
import {
  costByModelHandler,
  sessionQaHandler,
  sessionStatsHandler,
  sessionUsageHandler,
} from './usage.handlers';
import { CostByModelApiInputSchema, QaApiInputSchema, StatsApiInputSchema } from './usage.schemas';

export const sessionsRouter = router({
  create: publicProcedure.input(CreateSessionApiInputSchema).mutation(createSessionHandler),
  get: publicProcedure.input(SessionIdInputSchema).query(getSessionHandler),
  list: publicProcedure.input(ListSessionsApiInputSchema).query(listSessionsHandler),
  update: publicProcedure.input(UpdateSessionApiInputSchema).mutation(updateSessionHandler),
  delete: publicProcedure.input(SessionIdInputSchema).mutation(deleteSessionHandler),
  context: publicProcedure.input(SessionIdInputSchema).query(sessionContextHandler),
  usage: publicProcedure.input(SessionIdInputSchema).query(sessionUsageHandler),
  stats: publicProcedure.input(StatsApiInputSchema).query(sessionStatsHandler),
  costByModel: publicProcedure.input(CostByModelApiInputSchema).query(costByModelHandler),
  qa: publicProcedure.input(QaApiInputSchema).query(sessionQaHandler),
});
