import {
  IdSchema,
  MessageRoleSchema,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
  SEARCH_QUERY_MAX,
} from '@cognition/contracts';
import { z } from 'zod';
import { queryInt, queryTime, Timestamp } from './common';

/* Recall search over message contents. */

const searchQueryShape = {
  q: z
    .string()
    .max(SEARCH_QUERY_MAX)
    .meta({ description: 'Words to find (all must occur; case-insensitive); required' }),
  role: MessageRoleSchema.optional(),
  from: queryTime('Messages created at or after this time').optional(),
  to: queryTime('Messages created before this time').optional(),
  limit: queryInt(1, PAGE_LIMIT_MAX, `Page size (default ${PAGE_LIMIT_DEFAULT})`).optional(),
  offset: queryInt(0, 1_000_000_000, 'Hits to skip (default 0)').optional(),
};

export const SessionSearchQuery = z.object(searchQueryShape).strict();
export const SearchQuery = z
  .object({ ...searchQueryShape, session_id: IdSchema.optional() })
  .strict();

export const SearchPageBody = z
  .object({
    hits: z.array(
      z.object({
        message_id: z.string(),
        session_id: z.string(),
        session_title: z.string().nullable(),
        role: MessageRoleSchema,
        created_at: Timestamp,
        snippet: z
          .string()
          .meta({ description: 'The matching passage; matched words between [ and ]' }),
        rank: z.number().meta({ description: 'Higher is better (comparable within one answer)' }),
      }),
    ),
    total: z.number().int().min(0),
    has_more: z.boolean(),
  })
  .meta({ id: 'MessageSearchPage' });
