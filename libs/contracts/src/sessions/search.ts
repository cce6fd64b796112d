import { z } from 'zod';
import { IdSchema, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '../common';
import { MessageRoleSchema } from './message';

export const SEARCH_QUERY_MAX = 500;

/**
 * Full-text search over message contents. Words of `q` must all occur (any order, case
 * insensitive); hits are ranked best first. `sessionId` narrows to one session, `role` to one
 * role, `from`/`to` bound `createdAt` (`from` inclusive, `to` exclusive).
 */
export const MessageSearchQuerySchema = z
  .object({
    q: z
      .string()
      .max(SEARCH_QUERY_MAX)
      .refine((q) => /[\p{L}\p{N}]/u.test(q), 'must contain at least one letter or digit'),
    sessionId: IdSchema.optional(),
    role: MessageRoleSchema.optional(),
    from: z.date().optional(),
    to: z.date().optional(),
    limit: z.number().int().min(1).max(PAGE_LIMIT_MAX).default(PAGE_LIMIT_DEFAULT),
    offset: z.number().int().min(0).default(0),
  })
  .strict();
export type MessageSearchQuery = z.input<typeof MessageSearchQuerySchema>;

export interface MessageSearchHit {
  messageId: string;
  sessionId: string;
  sessionTitle: string | null;
  role: z.infer<typeof MessageRoleSchema>;
  createdAt: Date;
  /** The matching passage, matched words between `[` and `]`. */
  snippet: string;
  /** Higher is better; comparable within one result only. */
  rank: number;
}

export interface MessageSearchPage {
  hits: MessageSearchHit[];
  total: number;
  hasMore: boolean;
}

/** Snippet markers around matched words. */
export const SNIPPET_OPEN = '[';
export const SNIPPET_CLOSE = ']';
