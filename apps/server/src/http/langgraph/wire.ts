import type { AuthConfig, Caller } from '@cognition/api';
import { resolveCaller, toHttpError } from '@cognition/api';
import { STATELESS_RUN_METADATA_KEY } from '@cognition/contracts';
import type { Request, Response } from 'express';
import { requestLog } from '../request-log';
import { z } from 'zod';

/**
 * The LangGraph API's wire conventions (docs/langgraph-api.md): `{detail}` error bodies, 422
 * naming the field (`body.metadata`), thread metadata kept in our string-only session metadata.
 */

export class LangGraphHttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly errors?: { path: string; message: string }[],
  ) {
    super(detail);
  }
}

export function notFound(what: 'Thread' | 'Assistant' | 'Run'): LangGraphHttpError {
  return new LangGraphHttpError(404, `${what} not found`);
}

function sendDetail(
  res: Response,
  status: number,
  detail: string,
  errors?: { path: string; message: string }[],
): void {
  if (res.headersSent) return;
  res.status(status).json(errors ? { detail, errors } : { detail });
}

/** Parses `value` (a request part named `part`) or throws a 422 naming each field. */
export function parsePart<T extends z.ZodType>(
  schema: T,
  value: unknown,
  part: 'body' | 'query' | 'path',
): z.output<T> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const errors = parsed.error.issues.flatMap((issue) => {
    const at = [part, ...issue.path.map(String)].join('.');
    // A field this server does not take is named itself (`body.supersteps`), not its parent.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: `${at}.${key}`, message: 'not supported' }));
    }
    return [{ path: at, message: issue.message }];
  });
  throw new LangGraphHttpError(
    422,
    `Invalid ${part}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
    errors,
  );
}

export const JsonObject = z.record(z.string(), z.unknown());

/**
 * Our session metadata holds strings; LangGraph metadata holds any JSON. A string is kept as
 * is, any other value JSON-encoded, and this key lists the encoded ones, so the round trip is
 * exact and a string value reads the same in both APIs.
 */
const JSON_KEYS = 'langgraph.json_keys';
/** Marks a stateless run's thread (stateless.ts); our own, never part of its metadata. */
export const STATELESS_KEY = STATELESS_RUN_METADATA_KEY;
/** The graph a copied thread holds the state of (its runs name it otherwise); our own too. */
export const GRAPH_KEY = 'langgraph.graph_id';
/** Our own keys in a thread's session metadata: never taken from a caller nor shown. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set([JSON_KEYS, STATELESS_KEY, GRAPH_KEY]);

/** The reserved entries of a session's metadata (kept when a caller replaces the rest). */
export function reservedMetadata(metadata: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(metadata).filter(([key]) => RESERVED_KEYS.has(key) && key !== JSON_KEYS),
  );
}

export function encodeMetadata(metadata: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const encoded: string[] = [];
  for (const [key, value] of Object.entries(metadata)) {
    // Our reserved keys are never taken from a caller.
    if (value === undefined || RESERVED_KEYS.has(key)) continue;
    if (typeof value === 'string') out[key] = value;
    else {
      out[key] = JSON.stringify(value);
      encoded.push(key);
    }
  }
  if (encoded.length > 0) out[JSON_KEYS] = JSON.stringify(encoded.sort());
  return out;
}

export function decodeMetadata(metadata: Record<string, string>): Record<string, unknown> {
  let encoded: string[] = [];
  try {
    const listed: unknown = JSON.parse(metadata[JSON_KEYS] ?? '[]');
    if (Array.isArray(listed)) encoded = listed.filter((k): k is string => typeof k === 'string');
  } catch {
    // Written by someone else as plain text: every value then reads as a string.
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (RESERVED_KEYS.has(key)) continue;
    if (!encoded.includes(key)) {
      out[key] = value;
      continue;
    }
    try {
      out[key] = JSON.parse(value);
    } catch {
      out[key] = value;
    }
  }
  return out;
}

/**
 * A checkpoint's values as the LangGraph API sends them: LangChain messages as plain message
 * dicts (`{type, content, id, ...}`) rather than their constructor serialization.
 */
export function toWire(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(toWire);
  if (value instanceof Date) return value.toISOString();
  const message = value as { getType?: () => string; toDict?: () => { data: unknown } };
  if (typeof message.getType === 'function' && typeof message.toDict === 'function') {
    const data = toWire(message.toDict().data) as Record<string, unknown>;
    return { ...data, type: message.getType() };
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toWire(v)]));
}

/**
 * The SDK sends its key as `x-api-key`; ours are bearer keys. A request with `x-api-key` and no
 * `Authorization` is read as if it sent that key as a bearer token.
 */
function sdkHeaders(req: Request): Request['headers'] {
  const key = req.headers['x-api-key'];
  if (typeof key !== 'string' || req.headers.authorization !== undefined) return req.headers;
  return { ...req.headers, authorization: `Bearer ${key}` };
}

export function answerError(req: Request, res: Response, error: unknown): void {
  if (error instanceof LangGraphHttpError) {
    sendDetail(res, error.status, error.detail, error.errors);
    return;
  }
  const { status, body } = toHttpError(error);
  if (status >= 500) requestLog(req).error({ err: error }, 'LangGraph API request failed');
  // Our domain's "session not found" is the LangGraph API's "Thread not found".
  const detail = body.code === 'SESSION_NOT_FOUND' ? 'Thread not found' : body.detail;
  sendDetail(res, status, detail, body.errors);
}

/** The caller of a request (401/403 as our API keys and scopes say). */
export function callerOf(req: Request, auth: AuthConfig): Caller {
  return resolveCaller(sdkHeaders(req), auth);
}

/**
 * LangGraph's `Command.toJSON()` (what `RemoteGraph` sends) marks itself (`lg_name`) and lists
 * an empty `goto`: neither asks for anything, so neither is refused as an unknown field.
 */
export function withoutCommandMarkers(command: unknown): unknown {
  if (typeof command !== 'object' || command === null || Array.isArray(command)) return command;
  const { lg_name: marker, goto, ...rest } = command as Record<string, unknown>;
  return {
    ...rest,
    ...(marker !== 'Command' && marker !== undefined ? { lg_name: marker } : {}),
    ...(Array.isArray(goto) && goto.length === 0 ? {} : goto !== undefined ? { goto } : {}),
  };
}
