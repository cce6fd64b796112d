import { z } from 'zod';
import { IdSchema } from '../common';

/** Longest callback URL accepted (the same bound `messages.send` puts on `callbackUrl`). */
export const CALLBACK_URL_MAX = 2048;
/** Longest recorded error text; the dispatcher truncates longer transport errors to it. */
export const CALLBACK_ERROR_MAX = 2000;

/**
 * One delivery attempt of a run's completion callback, as recorded on the run
 * (`RunStore.recordCallbackAttempt`) and returned by `runs.get`. Strict: it is also the input of
 * the store, and nothing is assigned by storage.
 */
export const CallbackAttemptSchema = z
  .object({
    runId: IdSchema,
    /** One per delivery sequence: the same across its retries (receivers de-duplicate on it). */
    deliveryId: IdSchema,
    url: z.string().min(1).max(CALLBACK_URL_MAX),
    /** 1-based; unique within a delivery. */
    attempt: z.number().int().min(1),
    startedAt: z.date(),
    durationMs: z.number().int().min(0),
    /** HTTP status, or null when no response arrived (refused, timed out, cancelled). */
    status: z.number().int().min(100).max(599).nullable(),
    ok: z.boolean(),
    /** Why the attempt failed (`HTTP 503`, a transport error); null when it succeeded. */
    error: z.string().max(CALLBACK_ERROR_MAX).nullable(),
  })
  .strict();
export type CallbackAttempt = z.infer<typeof CallbackAttemptSchema>;

/**
 * How a run's completion callback is sent when an A2A push notification config set it: the body
 * is the A2A task in the shape of the protocol version the config came through, `token` goes in
 * `X-A2A-Notification-Token`, `authentication` in `Authorization: <scheme> <credentials>`.
 * Stored on the run (like its URL) so a restart sends the same; null: our completion payload.
 */
export const CallbackConfigSchema = z
  .object({
    a2aVersion: z.enum(['1.0', '0.3']),
    /** '' when the config has none. */
    token: z.string().max(1024),
    authentication: z
      .object({ scheme: z.string().min(1).max(64), credentials: z.string().max(4096) })
      .strict()
      .nullable(),
  })
  .strict();
export type CallbackConfig = z.infer<typeof CallbackConfigSchema>;
