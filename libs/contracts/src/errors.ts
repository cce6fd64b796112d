import { z } from 'zod';

/**
 * Error codes shared by every layer and surface. Each library throws its own typed error
 * carrying one of these codes; the API maps codes to tRPC codes and HTTP statuses in exactly
 * one place.
 */
export const ErrorCodeSchema = z.enum([
  'VALIDATION_ERROR',
  'NOT_FOUND',
  'SESSION_NOT_FOUND',
  'MESSAGE_NOT_FOUND',
  'RUN_NOT_FOUND',
  'CONFLICT',
  'VERSION_CONFLICT',
  'RUN_IN_PROGRESS',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'PAYLOAD_TOO_LARGE',
  'CIRCUIT_OPEN',
  'PROVIDER_CONFIG_ERROR',
  'PROVIDER_ERROR',
  'CONTEXT_OVERFLOW',
  'SANDBOX_ERROR',
  'PATH_VIOLATION',
  'TIMEOUT',
  'ABORTED',
  'STORAGE_ERROR',
  'RATE_LIMITED',
  'UNAVAILABLE',
  'INTERNAL_ERROR',
]);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

/** One offending field of a rejected input, as surfaced by the API (`errors[]`). */
export const FieldIssueSchema = z.object({
  path: z.string(),
  message: z.string(),
});
export type FieldIssue = z.infer<typeof FieldIssueSchema>;

/** The error body of every REST response that is not 2xx. */
export const ErrorBodySchema = z.object({
  detail: z.string(),
  code: ErrorCodeSchema,
  errors: z.array(FieldIssueSchema).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** Converts zod issues to field issues with dotted paths (`config.temperature`). */
export function toFieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
  }));
}

/**
 * The base of every library's typed error: a `code` the API maps to a status, and the offending
 * fields (`issues`) and `cause` as details. Each library extends it with its own code union and
 * `name`, so `instanceof` still tells whose error it is.
 */
export abstract class CodedError<Code extends ErrorCode> extends Error {
  constructor(
    readonly code: Code,
    message: string,
    readonly details: { issues?: FieldIssue[]; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
  }
}
