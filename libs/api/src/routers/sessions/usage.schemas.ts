import { QaQuerySchema, StatsQuerySchema, UsageQuerySchema } from '@cognition/contracts';
import type { z } from 'zod';

/** Optional as a whole: `sessions.stats()` covers every session in scope. */
export const StatsApiInputSchema = StatsQuerySchema.prefault({});
export type StatsApiInput = z.output<typeof StatsApiInputSchema>;

export const CostByModelApiInputSchema = UsageQuerySchema.prefault({});
export type CostByModelApiInput = z.output<typeof CostByModelApiInputSchema>;

export const QaApiInputSchema = QaQuerySchema;
export type QaApiInput = z.output<typeof QaApiInputSchema>;
