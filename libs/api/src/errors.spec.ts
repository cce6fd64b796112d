import { ErrorCodeSchema } from '@cognition/contracts';
import { CircuitOpenError } from '@cognition/circuit-breaker';
import { StorageError } from '@cognition/storage';
import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { z } from 'zod';
import { ApiError, describeError, errorCodeToStatus, toHttpError, toTRPCError } from './errors';

describe('errorCodeToStatus', () => {
  it('has a tRPC code and an HTTP status for every ErrorCode', () => {
    expect(Object.keys(errorCodeToStatus).sort()).toEqual([...ErrorCodeSchema.options].sort());
  });

  it.each(ErrorCodeSchema.options)(
    '%s: tRPC reports the same HTTP status over /trpc as REST does',
    (code) => {
      const { trpc, http } = errorCodeToStatus[code];
      expect(getHTTPStatusCodeFromError(new TRPCError({ code: trpc }))).toBe(http);
    },
  );

  it('maps the caller-caused codes to 4xx and only our own failures to 5xx', () => {
    const clientCodes = [
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
      'PROVIDER_CONFIG_ERROR',
      'PATH_VIOLATION',
      'ABORTED',
    ] as const;
    for (const code of clientCodes) {
      expect(errorCodeToStatus[code].http).toBeGreaterThanOrEqual(400);
      expect(errorCodeToStatus[code].http).toBeLessThan(500);
    }
    expect(errorCodeToStatus.VALIDATION_ERROR.http).toBe(422);
    expect(errorCodeToStatus.SESSION_NOT_FOUND.http).toBe(404);
    expect(errorCodeToStatus.VERSION_CONFLICT.http).toBe(409);
    expect(errorCodeToStatus.RUN_IN_PROGRESS.http).toBe(409);
    expect(errorCodeToStatus.CIRCUIT_OPEN.http).toBe(503);
  });
});

describe('toTRPCError', () => {
  it.each(ErrorCodeSchema.options)(
    'maps a domain error with code %s and keeps it as cause',
    (code) => {
      const domain = Object.assign(new Error(`boom ${code}`), { code });
      const mapped = toTRPCError(domain);
      expect(mapped.code).toBe(errorCodeToStatus[code].trpc);
      expect(mapped.cause).toBe(domain);
      expect(toTRPCError(mapped)).toBe(mapped);
    },
  );

  it('unwraps a domain error that tRPC wrapped as INTERNAL_SERVER_ERROR', () => {
    const storageError = StorageError.sessionNotFound('s1');
    const wrapped = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: storageError });
    const mapped = toTRPCError(wrapped);
    expect(mapped.code).toBe('NOT_FOUND');
    expect(mapped.message).toBe('Session not found: s1');
    expect(mapped.cause).toBe(storageError);
  });

  it('turns an input-parser BAD_REQUEST into UNPROCESSABLE_CONTENT naming the fields', () => {
    const zodError = z
      .object({ limit: z.number() })
      .strict()
      .safeParse({ limit: 'x', extra: 1 }).error;
    const mapped = toTRPCError(new TRPCError({ code: 'BAD_REQUEST', cause: zodError }));
    expect(mapped.code).toBe('UNPROCESSABLE_CONTENT');
    expect(mapped.cause).toBe(zodError);
    expect(mapped.message).toMatch(/^Invalid input: limit: .+; \(root\): .+extra/);
  });

  it('leaves other tRPC errors alone and hides unknown errors behind a generic 500', () => {
    const notFound = new TRPCError({
      code: 'NOT_FOUND',
      message: 'No procedure found on path "x"',
    });
    expect(toTRPCError(notFound)).toBe(notFound);

    const secret = new Error('password=hunter2 at /srv/db.sqlite');
    const mapped = toTRPCError(secret);
    expect(mapped.code).toBe('INTERNAL_SERVER_ERROR');
    expect(mapped.cause).toBe(secret);
    expect(mapped.message).toBe('Internal server error');
  });

  it('does not mistake infrastructure error codes for ours', () => {
    const enoent = Object.assign(new Error('ENOENT: /etc/secret'), { code: 'ENOENT' });
    expect(toTRPCError(enoent).code).toBe('INTERNAL_SERVER_ERROR');
  });
});

describe('toHttpError', () => {
  it('maps library errors by their code', () => {
    expect(toHttpError(StorageError.sessionNotFound('abc'))).toEqual({
      status: 404,
      body: { detail: 'Session not found: abc', code: 'SESSION_NOT_FOUND' },
    });
    expect(toHttpError(new StorageError('VERSION_CONFLICT', 'stale')).status).toBe(409);
    expect(toHttpError(new StorageError('RUN_IN_PROGRESS', 'busy'))).toEqual({
      status: 409,
      body: { detail: 'busy', code: 'RUN_IN_PROGRESS' },
    });
    expect(toHttpError(new CircuitOpenError('llm', 'OPEN', new Date(0), 0)).body.code).toBe(
      'CIRCUIT_OPEN',
    );
    expect(toHttpError(new ApiError('FORBIDDEN', 'no')).status).toBe(403);
  });

  it('carries field issues of validation errors as `errors`', () => {
    const parsed = z.object({ title: z.string().max(3) }).safeParse({ title: 'toolong' });
    if (parsed.success) throw new Error('expected the parse to fail');
    const storageError = StorageError.validation(parsed.error, 'session input');
    expect(toHttpError(storageError)).toEqual({
      status: 422,
      body: {
        detail: expect.stringContaining('title') as string,
        code: 'VALIDATION_ERROR',
        errors: [{ path: 'title', message: expect.any(String) as string }],
      },
    });
    const apiError = new ApiError('FORBIDDEN', 'missing', {
      issues: [{ path: 'headers.X-Cognition-Scope-User', message: 'required' }],
    });
    expect(toHttpError(apiError).body.errors).toEqual([
      { path: 'headers.X-Cognition-Scope-User', message: 'required' },
    ]);
  });

  it('maps TRPCErrors raised by tRPC itself', () => {
    expect(toHttpError(new TRPCError({ code: 'NOT_FOUND', message: 'No procedure' }))).toEqual({
      status: 404,
      body: { detail: 'No procedure', code: 'NOT_FOUND' },
    });
    expect(toHttpError(new TRPCError({ code: 'PARSE_ERROR', message: 'bad json' })).status).toBe(
      422,
    );
  });

  it('answers unknown errors and 500-class domain errors with no internals', () => {
    for (const error of [
      new Error('SELECT * FROM sessions failed: relation missing'),
      'a thrown string',
      undefined,
      new StorageError('STORAGE_ERROR', 'SQLITE_CORRUPT at /var/lib/db'),
      new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'stack at foo.ts:1' }),
    ]) {
      expect(toHttpError(error)).toEqual({
        status: 500,
        body: { detail: 'Internal server error', code: expect.stringMatching(/_ERROR$/) as string },
      });
    }
    expect(describeError(new Error('x')).code).toBe('INTERNAL_ERROR');
  });
});
