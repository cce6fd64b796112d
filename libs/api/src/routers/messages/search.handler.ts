import type { MessageSearchPage } from '@cognition/contracts';
import { MessageSearchQuerySchema } from '@cognition/contracts';
import type { z } from 'zod';
import type { ApiContext } from '../../context';

export const SearchMessagesApiInputSchema = MessageSearchQuerySchema;
export type SearchMessagesApiInput = z.output<typeof SearchMessagesApiInputSchema>;

/**
 * `messages.search`: full-text search over the messages of every session the caller may see
 * (or one, with `sessionId`), best match first, with a highlighted snippet. A `q` without any
 * word is a 422 naming `q`; a `sessionId` outside the caller's scope is SESSION_NOT_FOUND.
 */
export function searchMessagesHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: SearchMessagesApiInput;
}): Promise<MessageSearchPage> {
  return ctx.services.storage.search.search(input, ctx.caller.scope);
}
