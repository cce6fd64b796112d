import { toHttpError } from '@cognition/api';
import type { ErrorRequestHandler, Response } from 'express';
import { requestLog } from '../request-log';

/** The body of every non-2xx answer; once a stream's headers went out, the response just ends. */
export function sendError(
  res: Response,
  status: number,
  body: { detail: string; code: string; errors?: unknown },
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(status).json(body);
}

/** `error` as its HTTP status and body (domain codes mapped by libs/api), sent. */
export function sendDomainError(res: Response, error: unknown): void {
  const { status, body } = toHttpError(error);
  sendError(res, status, body);
}

/** body-parser's errors carry an HTTP status and a `type`; everything else is ours to classify. */
interface BodyParserError extends Error {
  status?: number;
  type?: string;
}

function isClientBodyError(error: BodyParserError): error is BodyParserError & { status: number } {
  return (
    (error as { expose?: unknown }).expose === true &&
    typeof error.status === 'number' &&
    error.status >= 400 &&
    error.status < 500
  );
}

/** The app's last handler: a body that cannot be read is the caller's mistake, never a 500. */
export const errorHandler: ErrorRequestHandler = (error: BodyParserError, req, res, _next) => {
  switch (error.type ?? 'unknown') {
    case 'entity.too.large':
      sendError(res, 413, {
        detail: `Request body exceeds the limit of ${(error as { limit?: number }).limit ?? 'the configured'} bytes`,
        code: 'PAYLOAD_TOO_LARGE',
      });
      return;
    case 'entity.parse.failed':
      sendError(res, 400, {
        detail: `Malformed JSON body: ${error.message}`,
        code: 'VALIDATION_ERROR',
      });
      return;
    case 'encoding.unsupported':
    case 'charset.unsupported': {
      // Name the header at fault: `unsupported charset "KLINGON"` alone does not say where.
      const header = error.type === 'charset.unsupported' ? 'Content-Type' : 'Content-Encoding';
      sendError(res, 415, {
        detail: `${header}: ${error.message}`,
        code: 'VALIDATION_ERROR',
        errors: [{ path: header, message: error.message }],
      });
      return;
    }
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      sendError(res, 400, { detail: error.message, code: 'VALIDATION_ERROR' });
      return;
    default: {
      if (error instanceof URIError) {
        // Express could not percent-decode a path parameter (`%ED%A0%80`, `%zz`): the URL is at
        // fault. The value is not echoed: it may be as long as the URL.
        const message = 'a path parameter is not valid percent-encoded UTF-8';
        sendError(res, 400, {
          detail: `Invalid URL path: ${message}`,
          code: 'VALIDATION_ERROR',
          errors: [{ path: '(path)', message }],
        });
        return;
      }
      if (isClientBodyError(error)) {
        // body-parser's other refusals (a body that does not inflate under its
        // Content-Encoding, ...) carry a 4xx status and a message meant for the caller.
        sendError(res, error.status, {
          detail: `Request body could not be read: ${error.message}`,
          code: error.status === 413 ? 'PAYLOAD_TOO_LARGE' : 'VALIDATION_ERROR',
          errors: [{ path: '(body)', message: error.message }],
        });
        return;
      }
      const { status, body } = toHttpError(error);
      if (status >= 500) requestLog(req).error({ err: error }, 'request failed');
      sendError(res, status, body);
    }
  }
};
