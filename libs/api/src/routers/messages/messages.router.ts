import { publicProcedure, router } from '../../trpc';
import { getMessageHandler } from './get.handler';
import { listMessagesHandler } from './list.handler';
import {
  GetMessageApiInputSchema,
  ListMessagesApiInputSchema,
  RebuildMessagesApiInputSchema,
  SendMessageApiInputSchema,
} from './schemas';
import { sendMessageHandler } from './send.handler';
import { rebuildMessagesHandler } from './rebuild.handler';

export const messagesRouter = router({
  list: publicProcedure.input(ListMessagesApiInputSchema).query(listMessagesHandler),
  get: publicProcedure.input(GetMessageApiInputSchema).query(getMessageHandler),
  send: publicProcedure.input(SendMessageApiInputSchema).mutation(sendMessageHandler),
  rebuild: publicProcedure.input(RebuildMessagesApiInputSchema).mutation(rebuildMessagesHandler),
});
