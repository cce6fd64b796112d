import { publicProcedure, router } from '../../trpc';
import { getMessageHandler } from './get.handler';
import { listMessagesHandler } from './list.handler';
import { GetMessageApiInputSchema, ListMessagesApiInputSchema } from './schemas';

export const messagesRouter = router({
  list: publicProcedure.input(ListMessagesApiInputSchema).query(listMessagesHandler),
  get: publicProcedure.input(GetMessageApiInputSchema).query(getMessageHandler),
});
