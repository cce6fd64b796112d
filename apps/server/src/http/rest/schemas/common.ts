import { ErrorCodeSchema, IdSchema } from '@cognition/contracts';
import { z } from 'zod';

/*
 * What the REST wire shapes of every domain share (snake_case, the original Cognition's field
 * names): the adapters validate requests with these schemas and the OpenAPI document is
 * generated from them. Field constraints come from the contracts (or the runtime's inputs), so
 * REST and tRPC accept exactly the same values. User maps (metadata, scopes) pass through
 * untouched: their keys are data, not field names.
 */

/** A point in time on the wire: ISO 8601 text (`2026-11-25T10:00:00.000Z`). */
export const Timestamp = z.string().meta({ format: 'date-time' });

/** An ISO 8601 timestamp with a time zone in a body (`2026-11-25T10:00:00Z`), as a Date. */
export const TimestampInput = z.iso
  .datetime({ offset: true, error: 'expected an ISO 8601 date-time with a time zone' })
  .transform((text) => new Date(text));

/** An ISO-8601 date-time query parameter (with `Z` or an offset), as a Date. */
export function queryTime(description: string) {
  return z.iso
    .datetime({ offset: true, error: 'expected an ISO-8601 date-time, e.g. 2026-11-25T00:00:00Z' })
    .transform((value) => new Date(value))
    .meta({ description });
}

/** A non-negative integer sent as query text (`?limit=20`). */
export function queryInt(min: number, max: number, description: string) {
  return z
    .string()
    .regex(/^\d{1,9}$/, `expected an integer between ${min} and ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .meta({ description });
}

export const ErrorBodySchema = z
  .object({
    detail: z.string(),
    code: ErrorCodeSchema,
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Error', description: 'Body of every non-2xx response.' });

export const SessionIdParams = z.object({ id: IdSchema.meta({ description: 'Session id' }) });

export const METADATA_QUERY_PREFIX = 'metadata.';
