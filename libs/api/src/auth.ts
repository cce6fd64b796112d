import type { FieldIssue } from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from './errors';

/**
 * Who is calling, as established by `resolveCaller` from the request headers.
 * `scope` is the caller's tenant scope: every session-addressed storage call passes it, so a
 * session outside it behaves exactly like a missing one. The empty scope sees everything
 * (scoping disabled).
 */
export interface Caller {
  scope: Scope;
  /** Id (never the secret) of the API key that authenticated the request, when keys are configured. */
  apiKeyId?: string;
  /**
   * May change the server's configuration (the registry's agents and providers): an admin key
   * (`COGNITION_ADMIN_API_KEYS`), or anyone when no API key is configured at all (dev mode).
   * Absent: false.
   */
  admin?: boolean;
}

/** One API key. `id` identifies it in logs and contexts; `key` is the secret and is never logged. */
export interface ApiKeyConfig {
  id: string;
  key: string;
  /** Scope values pinned to this key; they override any `X-Cognition-Scope-*` header. */
  scopes?: Record<string, string>;
  /** May change the server's configuration (registry writes): `COGNITION_ADMIN_API_KEYS`. */
  admin?: boolean;
}

/**
 * Authentication and tenant scoping, as configured by the server.
 * - `apiKeys` empty: no authentication.
 * - `scoping.enabled`: every key of `scoping.keys` must be supplied (header or pinned by the key).
 */
export interface AuthConfig {
  scoping: { enabled: boolean; keys: string[] };
  apiKeys: ApiKeyConfig[];
}

export type RequestHeaders = Record<string, string | string[] | undefined>;

export interface ResolveCallerOptions {
  /**
   * Default true. When false (e.g. `/health`), a request without a key or without scope headers
   * is let through with whatever scope it supplied; a key that is presented but wrong is still
   * rejected.
   */
  requireAuth?: boolean;
}

const SCOPE_HEADER_PREFIX = 'x-cognition-scope-';
const SCOPE_VALUE_MAX = 2048;

/** `user` -> `X-Cognition-Scope-User`, `project-id` -> `X-Cognition-Scope-Project-Id`. */
export function scopeHeaderName(scopeKey: string): string {
  const suffix = scopeKey
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('-');
  return `X-Cognition-Scope-${suffix}`;
}

/** Header lookup by case-insensitive name; repeated headers must agree. */
function headerValue(headers: RequestHeaders, name: string): string | undefined {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    values.push(...(Array.isArray(value) ? value : [value]));
  }
  const distinct = new Set(values.map((value) => value.trim()).filter((value) => value !== ''));
  if (distinct.size > 1) {
    throw new ApiError('VALIDATION_ERROR', `Conflicting values for header ${name}`, {
      issues: [{ path: `headers.${name}`, message: 'sent more than once with different values' }],
    });
  }
  return distinct.values().next().value;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * Finds the configured key equal to `presented`. Both sides are hashed to equal-length digests
 * and compared with timingSafeEqual, and every key is compared (no early exit), so neither the
 * key's content nor its position leaks through timing.
 */
function matchApiKey(presented: string, keys: readonly ApiKeyConfig[]): ApiKeyConfig | undefined {
  const presentedDigest = digest(presented);
  let match: ApiKeyConfig | undefined;
  for (const candidate of keys) {
    if (timingSafeEqual(presentedDigest, digest(candidate.key)) && match === undefined) {
      match = candidate;
    }
  }
  return match;
}

function bearerToken(headers: RequestHeaders): string | undefined {
  const authorization = headerValue(headers, 'authorization');
  if (authorization === undefined) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(authorization);
  return match?.[1]?.trim();
}

function authenticate(
  headers: RequestHeaders,
  config: AuthConfig,
  requireAuth: boolean,
): ApiKeyConfig | undefined {
  if (config.apiKeys.length === 0) return undefined;
  const token = bearerToken(headers);
  if (token === undefined) {
    if (!requireAuth) return undefined;
    throw new ApiError('UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <key>');
  }
  const key = matchApiKey(token, config.apiKeys);
  if (!key) throw new ApiError('UNAUTHORIZED', 'Invalid API key');
  return key;
}

/**
 * Establishes the caller of one request from its headers (one implementation for REST and
 * /trpc). Throws ApiError:
 * - `UNAUTHORIZED` when API keys are configured and the bearer key is missing or wrong;
 * - `FORBIDDEN` naming every missing `X-Cognition-Scope-<Key>` header when scoping is enabled
 *   (fail closed);
 * - `VALIDATION_ERROR` for an oversized or contradictory scope header.
 * Scope values pinned by the key override headers. `admin` is true for an admin key, and for
 * everyone when no key is configured. With scoping disabled the scope is empty
 * (sees everything) unless the key pins scopes, which then always apply.
 */
export function resolveCaller(
  headers: RequestHeaders,
  config: AuthConfig,
  options: ResolveCallerOptions = {},
): Caller {
  const requireAuth = options.requireAuth ?? true;
  const key = authenticate(headers, config, requireAuth);
  const pinned = key?.scopes ?? {};
  const scope: Scope = {};
  const missing: string[] = [];

  if (config.scoping.enabled) {
    for (const scopeKey of config.scoping.keys) {
      if (pinned[scopeKey] !== undefined) continue;
      const name = scopeHeaderName(scopeKey);
      const value = headerValue(headers, SCOPE_HEADER_PREFIX + scopeKey);
      if (value === undefined) {
        missing.push(name);
      } else if (value.length > SCOPE_VALUE_MAX) {
        throw new ApiError(
          'VALIDATION_ERROR',
          `Header ${name} is longer than ${SCOPE_VALUE_MAX} characters`,
          {
            issues: [{ path: `headers.${name}`, message: `at most ${SCOPE_VALUE_MAX} characters` }],
          },
        );
      } else {
        scope[scopeKey] = value;
      }
    }
  }
  Object.assign(scope, pinned);

  if (missing.length > 0 && requireAuth) {
    const issues: FieldIssue[] = missing.map((name) => ({
      path: `headers.${name}`,
      message: 'required when scoping is enabled',
    }));
    throw new ApiError('FORBIDDEN', `Missing required scope header(s): ${missing.join(', ')}`, {
      issues,
    });
  }
  // No key configured at all is dev mode: everyone may do everything, configuration included.
  const admin = config.apiKeys.length === 0 || key?.admin === true;
  return {
    scope,
    ...(key ? { apiKeyId: key.id } : {}),
    ...(admin ? { admin: true } : {}),
  };
}

/**
 * Refuses a caller that may not change the server's configuration.
 * @throws ApiError FORBIDDEN saying which keys may.
 */
export function requireAdmin(caller: Caller): void {
  if (caller.admin === true) return;
  throw new ApiError(
    'FORBIDDEN',
    'Changing agents and providers needs an admin API key (one of COGNITION_ADMIN_API_KEYS); this key may only read them',
  );
}
