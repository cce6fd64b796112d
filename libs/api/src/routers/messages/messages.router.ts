import { publicProcedure, router } from '../../trpc';
import { deleteFeedbackHandler, setFeedbackHandler } from './feedback.handlers';
import { DeleteFeedbackApiInputSchema, SetFeedbackApiInputSchema } from './feedback.schemas';
import { getMessageHandler } from './get.handler';
import { SearchMessagesApiInputSchema, searchMessagesHandler } from './search.handler';
import { listMessagesHandler } from './list.handler';
import {
  GetMessageApiInputSchema,
  ListMessagesApiInputSchema,
  RebuildMessagesApiInputSchema,
  SendMessageApiInputSchema,
} from './schemas';
import { sendMessageHandler } from './send.handler';
import { streamMessageHandler } from './stream.handler';
import { rebuildMessagesHandler } from './rebuild.handler';

export const messagesRouter = router({
  list: publicProcedure.input(ListMessagesApiInputSchema).query(listMessagesHandler),
  get: publicProcedure.input(GetMessageApiInputSchema).query(getMessageHandler),
  send: publicProcedure.input(SendMessageApiInputSchema).mutation(sendMessageHandler),
  stream: publicProcedure.input(SendMessageApiInputSchema).mutation(streamMessageHandler),
  search: publicProcedure.input(SearchMessagesApiInputSchema).query(searchMessagesHandler),
  setFeedback: publicProcedure.input(SetFeedbackApiInputSchema).mutation(setFeedbackHandler),
  deleteFeedback: publicProcedure
    .input(DeleteFeedbackApiInputSchema)
    .mutation(deleteFeedbackHandler),
  rebuild: publicProcedure.input(RebuildMessagesApiInputSchema).mutation(rebuildMessagesHandler),
});
