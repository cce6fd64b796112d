import type { ApiServices, AuthConfig, Caller } from '@cognition/api';
import { createApiContext, createCaller, resolveCaller, toHttpError } from '@cognition/api';
import express from 'express';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { requestIdOf } from '../request-log';
import type { ApiCaller } from '../rest/route';

/** JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object). */
export const JSON_RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

export type JsonRpcId = string | number | null;

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** Sends one JSON-RPC error response (HTTP `status`; JSON-RPC over HTTP answers most with 200). */
export function sendJsonRpcError(
  res: Response,
  status: number,
  id: JsonRpcId,
  error: JsonRpcErrorObject,
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(status).json({ jsonrpc: '2.0', id, error });
}

/**
 * The JSON body of a JSON-RPC endpoint (any Content-Type, `limit` bytes); a body that is not
 * JSON is answered with JSON-RPC's parse error, too large a one with 413, never a 500.
 */
export function jsonRpcBody(limit: number): RequestHandler[] {
  const parse = express.json({ limit, type: () => true, strict: false });
  const refuse: ErrorRequestHandler = (error: { type?: string }, _req, res, next) => {
    if (error.type === 'entity.parse.failed') {
      sendJsonRpcError(res, 400, null, { code: JSON_RPC.PARSE_ERROR, message: 'Parse error' });
    } else if (error.type === 'entity.too.large') {
      sendJsonRpcError(res, 413, null, {
        code: JSON_RPC.INVALID_REQUEST,
        message: `Request body exceeds the limit of ${limit} bytes`,
      });
    } else next(error);
  };
  return [parse, refuse as unknown as RequestHandler];
}

/**
 * The caller of a protocol request and a tRPC caller acting for it (aborted when the client
 * goes away: that ends event subscriptions, never a run). Authentication and scoping are the
 * REST API's: `Authorization: Bearer <key>` and the `X-Cognition-Scope-*` headers.
 * Throws as `resolveCaller` does.
 */
export function protocolCaller(
  req: Request,
  res: Response,
  auth: AuthConfig,
  services: ApiServices,
): { caller: Caller; api: ApiCaller; signal: AbortSignal } {
  const caller = resolveCaller(req.headers, auth);
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  const api = createCaller(createApiContext(services, caller, requestIdOf(req)), {
    signal: gone.signal,
  });
  return { caller, api, signal: gone.signal };
}

/** An authentication or scoping refusal as a JSON-RPC error with the REST status (401, 403, 422). */
export function sendCallerError(res: Response, error: unknown): void {
  const { status, body } = toHttpError(error);
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  sendJsonRpcError(res, status, null, {
    code: status >= 500 ? JSON_RPC.INTERNAL_ERROR : JSON_RPC.INVALID_REQUEST,
    message: body.detail,
    data: { code: body.code, ...(body.errors ? { errors: body.errors } : {}) },
  });
}

/**
 * Why `body` is not a JSON-RPC 2.0 request (`jsonrpc: "2.0"`, a string `method`, an id that is a
 * string, a number or null), or null when it is one.
 */
export function invalidEnvelope(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return 'a JSON-RPC request is an object (batches are not accepted)';
  }
  const request = body as Record<string, unknown>;
  if (request['jsonrpc'] !== '2.0') return 'jsonrpc: must be "2.0"';
  if (typeof request['method'] !== 'string' || request['method'] === '') {
    return 'method: must be a non-empty string';
  }
  const id = request['id'];
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    return 'id: must be a string, a number or null';
  }
  return null;
}
