import type { ErrorBody, ErrorCode, FieldIssue } from '@cognition/contracts';
import { ErrorCodeSchema } from '@cognition/contracts';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server';
import { TRPCError } from '@trpc/server';

/**
 * An error raised by the API layer itself (authentication, scoping, lookups that came back
 * empty). Like every library's typed error it carries an `ErrorCode`; the one error-mapping
 * middleware and `toHttpError` turn it into a TRPCError / HTTP status.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ErrorCode;
  readonly issues?: FieldIssue[];

  constructor(
    code: ErrorCode,
    message: string,
    options: { issues?: FieldIssue[]; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.issues) this.issues = options.issues;
  }
}

/**
 * The single mapping from our error codes to tRPC codes and HTTP statuses. tRPC derives the
 * HTTP status of `/trpc` responses from the tRPC code, so every pair here is chosen to agree
 * with tRPC's own status table (a test checks it): REST and tRPC clients see the same status.
 */
export const errorCodeToStatus = {
  VALIDATION_ERROR: { trpc: 'UNPROCESSABLE_CONTENT', http: 422 },
  NOT_FOUND: { trpc: 'NOT_FOUND', http: 404 },
  SESSION_NOT_FOUND: { trpc: 'NOT_FOUND', http: 404 },
  MESSAGE_NOT_FOUND: { trpc: 'NOT_FOUND', http: 404 },
  RUN_NOT_FOUND: { trpc: 'NOT_FOUND', http: 404 },
  CONFLICT: { trpc: 'CONFLICT', http: 409 },
  VERSION_CONFLICT: { trpc: 'CONFLICT', http: 409 },
  RUN_IN_PROGRESS: { trpc: 'CONFLICT', http: 409 },
  UNAUTHORIZED: { trpc: 'UNAUTHORIZED', http: 401 },
  FORBIDDEN: { trpc: 'FORBIDDEN', http: 403 },
  PAYLOAD_TOO_LARGE: { trpc: 'PAYLOAD_TOO_LARGE', http: 413 },
  CIRCUIT_OPEN: { trpc: 'SERVICE_UNAVAILABLE', http: 503 },
  // A session config naming an unknown provider/model is fixable by the caller: not a 500.
  PROVIDER_CONFIG_ERROR: { trpc: 'UNPROCESSABLE_CONTENT', http: 422 },
  PROVIDER_ERROR: { trpc: 'BAD_GATEWAY', http: 502 },
  // The conversation does not fit the model even after compaction (a run's error event code).
  CONTEXT_OVERFLOW: { trpc: 'PAYLOAD_TOO_LARGE', http: 413 },
  SANDBOX_ERROR: { trpc: 'INTERNAL_SERVER_ERROR', http: 500 },
  PATH_VIOLATION: { trpc: 'FORBIDDEN', http: 403 },
  TIMEOUT: { trpc: 'GATEWAY_TIMEOUT', http: 504 },
  ABORTED: { trpc: 'CLIENT_CLOSED_REQUEST', http: 499 },
  STORAGE_ERROR: { trpc: 'INTERNAL_SERVER_ERROR', http: 500 },
  RATE_LIMITED: { trpc: 'TOO_MANY_REQUESTS', http: 429 },
  UNAVAILABLE: { trpc: 'SERVICE_UNAVAILABLE', http: 503 },
  INTERNAL_ERROR: { trpc: 'INTERNAL_SERVER_ERROR', http: 500 },
} as const satisfies Record<ErrorCode, { trpc: TRPC_ERROR_CODE_KEY; http: number }>;

/** Our code for a TRPCError raised by tRPC itself (unknown procedure, malformed request...). */
const trpcCodeToErrorCode: Record<TRPC_ERROR_CODE_KEY, ErrorCode> = {
  PARSE_ERROR: 'VALIDATION_ERROR',
  BAD_REQUEST: 'VALIDATION_ERROR',
  UNPROCESSABLE_CONTENT: 'VALIDATION_ERROR',
  METHOD_NOT_SUPPORTED: 'VALIDATION_ERROR',
  PRECONDITION_FAILED: 'VALIDATION_ERROR',
  PRECONDITION_REQUIRED: 'VALIDATION_ERROR',
  UNSUPPORTED_MEDIA_TYPE: 'VALIDATION_ERROR',
  UNAUTHORIZED: 'UNAUTHORIZED',
  PAYMENT_REQUIRED: 'FORBIDDEN',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  CONFLICT: 'CONFLICT',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  TIMEOUT: 'TIMEOUT',
  GATEWAY_TIMEOUT: 'TIMEOUT',
  CLIENT_CLOSED_REQUEST: 'ABORTED',
  TOO_MANY_REQUESTS: 'RATE_LIMITED',
  SERVICE_UNAVAILABLE: 'UNAVAILABLE',
  BAD_GATEWAY: 'PROVIDER_ERROR',
  NOT_IMPLEMENTED: 'INTERNAL_ERROR',
  INTERNAL_SERVER_ERROR: 'INTERNAL_ERROR',
};

const GENERIC_INTERNAL_DETAIL = 'Internal server error';
const KNOWN_CODES: ReadonlySet<string> = new Set(ErrorCodeSchema.options);

/** A domain error in the sense of ARCHITECTURE.md convention 4: an Error with a known `code`. */
interface DomainError extends Error {
  code: ErrorCode;
}

function isDomainError(error: unknown): error is DomainError {
  if (!(error instanceof Error) || error instanceof TRPCError) return false;
  const code: unknown = (error as Partial<DomainError>).code;
  return typeof code === 'string' && KNOWN_CODES.has(code);
}

function isFieldIssueList(value: unknown): value is FieldIssue[] {
  return (
    Array.isArray(value) &&
    value.every(
      (item) =>
        typeof item === 'object' &&
        item !== null &&
        typeof (item as FieldIssue).path === 'string' &&
        typeof (item as FieldIssue).message === 'string',
    )
  );
}

/** Field issues carried by a domain error (`issues` on ApiError, `details.issues` on StorageError). */
function domainIssues(error: DomainError): FieldIssue[] | undefined {
  const direct = (error as { issues?: unknown }).issues;
  if (isFieldIssueList(direct)) return direct;
  const nested = (error as { details?: { issues?: unknown } }).details?.issues;
  return isFieldIssueList(nested) ? nested : undefined;
}

type SchemaPathSegment = PropertyKey | { key: PropertyKey };

/**
 * Issues of a schema validation failure: a ZodError or any Standard Schema failure (tRPC wraps
 * both as the `cause` of a BAD_REQUEST when a procedure input does not parse).
 */
function schemaIssues(error: unknown): FieldIssue[] | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const issues = (error as { issues?: unknown }).issues;
  if (!Array.isArray(issues) || issues.length === 0) return undefined;
  const result: FieldIssue[] = [];
  for (const issue of issues as unknown[]) {
    if (typeof issue !== 'object' || issue === null) return undefined;
    const { message, path } = issue as { message?: unknown; path?: unknown };
    if (typeof message !== 'string') return undefined;
    const segments = Array.isArray(path) ? (path as SchemaPathSegment[]) : [];
    const dotted = segments
      .map((segment) =>
        typeof segment === 'object' && segment !== null ? String(segment.key) : String(segment),
      )
      .join('.');
    result.push({ path: dotted || '(root)', message });
  }
  return result;
}

/**
 * tRPC's own refusals of a request it could not read name no field: a body over the limit
 * (message `PAYLOAD_TOO_LARGE`), an `input` that is not JSON or whose superjson `meta` is
 * refused (`__proto__ is not allowed as a property`). The part of the request at fault is
 * the field a caller needs.
 */
function transportIssues(error: TRPCError): { issues?: FieldIssue[] } {
  if (error.code === 'PAYLOAD_TOO_LARGE') {
    return { issues: [{ path: '(body)', message: 'request body exceeds the size limit' }] };
  }
  if (error.code === 'PARSE_ERROR' || error.code === 'BAD_REQUEST') {
    return { issues: [{ path: '(input)', message: error.message }] };
  }
  return {};
}

/** How any error presents itself to a caller: our code, a caller-safe message, field issues. */
export interface DescribedError {
  code: ErrorCode;
  message: string;
  issues?: FieldIssue[];
}

function validationFailure(issues: FieldIssue[]): DescribedError {
  const summary = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  return { code: 'VALIDATION_ERROR', message: `Invalid input: ${summary}`, issues };
}

function safeMessage(code: ErrorCode, message: string): string {
  // 500s are our fault; their messages may carry SQL, paths or stack details.
  return errorCodeToStatus[code].http === 500 ? GENERIC_INTERNAL_DETAIL : message;
}

/**
 * Classifies any thrown value. Used by the error-mapping middleware, the tRPC error formatter
 * and `toHttpError`, so the three can never disagree. Messages of 500-class errors are replaced
 * by a generic detail.
 */
export function describeError(error: unknown): DescribedError {
  if (error instanceof TRPCError) {
    const cause = error.cause;
    if (isDomainError(cause)) return describeError(cause);
    const issues = schemaIssues(cause);
    if (issues && (error.code === 'BAD_REQUEST' || error.code === 'UNPROCESSABLE_CONTENT')) {
      return validationFailure(issues);
    }
    const code = trpcCodeToErrorCode[error.code];
    return { code, message: safeMessage(code, error.message), ...transportIssues(error) };
  }
  if (isDomainError(error)) {
    const issues = domainIssues(error);
    return {
      code: error.code,
      message: safeMessage(error.code, error.message),
      ...(issues ? { issues } : {}),
    };
  }
  return { code: 'INTERNAL_ERROR', message: GENERIC_INTERNAL_DETAIL };
}

/**
 * Converts whatever a procedure (or context creation) threw into the TRPCError tRPC should
 * report, keeping the original error as `cause`. Errors tRPC raised itself pass through unless
 * they wrap a domain error or an input validation failure. Idempotent.
 */
export function toTRPCError(error: unknown): TRPCError {
  if (error instanceof TRPCError) {
    const cause = error.cause;
    if (isDomainError(cause)) {
      return error.code === errorCodeToStatus[cause.code].trpc ? error : toTRPCError(cause);
    }
    if (error.code === 'BAD_REQUEST' && schemaIssues(cause)) {
      const described = describeError(error);
      return new TRPCError({
        code: errorCodeToStatus.VALIDATION_ERROR.trpc,
        message: described.message,
        cause,
      });
    }
    return error;
  }
  if (isDomainError(error)) {
    return new TRPCError({
      code: errorCodeToStatus[error.code].trpc,
      message: error.message,
      cause: error,
    });
  }
  return new TRPCError({
    code: 'INTERNAL_SERVER_ERROR',
    message: GENERIC_INTERNAL_DETAIL,
    cause: error,
  });
}

/**
 * Maps any error — a TRPCError thrown by `createCaller` (input validation included), a domain
 * error, or anything unknown — to the REST status and `{detail, code, errors}` body. Unknown
 * errors become a 500 with a generic detail and no internals.
 */
export function toHttpError(error: unknown): { status: number; body: ErrorBody } {
  const described = describeError(error);
  const body: ErrorBody = { detail: described.message, code: described.code };
  if (described.issues && described.issues.length > 0) body.errors = described.issues;
  return { status: errorCodeToStatus[described.code].http, body };
}
