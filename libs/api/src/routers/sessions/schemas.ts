import {
  CreateSessionInputSchema,
  IdSchema,
  ListSessionsQuerySchema,
  UpdateSessionInputSchema,
} from '@cognition/contracts';
import { z } from 'zod';

/** Inputs are strict: an unknown field is a 422, never silently dropped. */
export const CreateSessionApiInputSchema = CreateSessionInputSchema.pick({
  title: true,
  agentName: true,
  metadata: true,
  config: true,
}).strict();
export type CreateSessionApiInput = z.output<typeof CreateSessionApiInputSchema>;

export const SessionIdInputSchema = z.object({ id: IdSchema }).strict();
export type SessionIdInput = z.output<typeof SessionIdInputSchema>;

/** Optional as a whole: `sessions.list()` is the first page with default limit. */
export const ListSessionsApiInputSchema = ListSessionsQuerySchema.prefault({});
export type ListSessionsApiInput = z.output<typeof ListSessionsApiInputSchema>;

export const UpdateSessionApiInputSchema = UpdateSessionInputSchema.extend({
  id: IdSchema,
}).strict();
export type UpdateSessionApiInput = z.output<typeof UpdateSessionApiInputSchema>;
