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
  DeleteMetadataApiInputSchema,
  FailSessionApiInputSchema,
  ForkSessionApiInputSchema,
  RewindSessionApiInputSchema,
  SessionActionApiInputSchema,
  SessionPageApiInputSchema,
  SetMetadataApiInputSchema,
  WatchSessionsApiInputSchema,
} from './schemas';
import { updateSessionHandler } from './update.handler';
import {
  clearSessionHandler,
  completeSessionHandler,
  deleteMetadataHandler,
  failSessionHandler,
  forkSessionHandler,
  resumeSessionHandler,
  rewindSessionHandler,
  sessionActivityHandler,
  sessionHistoryHandler,
  setMetadataHandler,
  suspendSessionHandler,
  watchSessionsHandler,
} from './lifecycle.handlers';
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
  suspend: publicProcedure.input(SessionActionApiInputSchema).mutation(suspendSessionHandler),
  resume: publicProcedure.input(SessionActionApiInputSchema).mutation(resumeSessionHandler),
  complete: publicProcedure.input(SessionActionApiInputSchema).mutation(completeSessionHandler),
  fail: publicProcedure.input(FailSessionApiInputSchema).mutation(failSessionHandler),
  clear: publicProcedure.input(SessionActionApiInputSchema).mutation(clearSessionHandler),
  fork: publicProcedure.input(ForkSessionApiInputSchema).mutation(forkSessionHandler),
  rewind: publicProcedure.input(RewindSessionApiInputSchema).mutation(rewindSessionHandler),
  setMetadata: publicProcedure.input(SetMetadataApiInputSchema).mutation(setMetadataHandler),
  deleteMetadata: publicProcedure
    .input(DeleteMetadataApiInputSchema)
    .mutation(deleteMetadataHandler),
  history: publicProcedure.input(SessionPageApiInputSchema).query(sessionHistoryHandler),
  activity: publicProcedure.input(SessionPageApiInputSchema).query(sessionActivityHandler),
  watch: publicProcedure.input(WatchSessionsApiInputSchema).subscription(watchSessionsHandler),
});
