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

export const sessionsRouter = router({
  create: publicProcedure.input(CreateSessionApiInputSchema).mutation(createSessionHandler),
  get: publicProcedure.input(SessionIdInputSchema).query(getSessionHandler),
  list: publicProcedure.input(ListSessionsApiInputSchema).query(listSessionsHandler),
  update: publicProcedure.input(UpdateSessionApiInputSchema).mutation(updateSessionHandler),
  delete: publicProcedure.input(SessionIdInputSchema).mutation(deleteSessionHandler),
  context: publicProcedure.input(SessionIdInputSchema).query(sessionContextHandler),
});
