import { createHash } from 'node:crypto';
import { list } from './env-values';
import type { ApiKeyConfig } from './server-config';

// The API keys of the server's configuration (COGNITION_API_KEYS, COGNITION_ADMIN_API_KEYS):
// their syntax, their ids, and the one list the two variables make.

const SCOPE_KEY_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const API_KEY_PATTERN = /^[A-Za-z0-9._~+/=-]{16,512}$/;

/** A stable, non-reversible name for a key, used in logs and as `Caller.apiKeyId`. */
export function apiKeyFingerprint(key: string): string {
  return `key_${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}

/**
 * Parses `COGNITION_API_KEYS` (or, with `name`, `COGNITION_ADMIN_API_KEYS`, whose keys are
 * marked `admin`): comma-separated entries, each `key` or
 * `key:scopeKey=value;scopeKey=value`. Keys are 16–512 characters of `A-Z a-z 0-9 . _ ~ + / = -`
 * (so `,` `:` `;` can delimit); scope values may not contain `,` or `;`.
 */
export function parseApiKeys(
  raw: string,
  problems: string[],
  name: 'COGNITION_API_KEYS' | 'COGNITION_ADMIN_API_KEYS' = 'COGNITION_API_KEYS',
): ApiKeyConfig[] {
  const keys: ApiKeyConfig[] = [];
  const seen = new Set<string>();
  list(raw).forEach((entry, index) => {
    const where = `${name} entry ${index + 1}`;
    const colon = entry.indexOf(':');
    const key = colon === -1 ? entry : entry.slice(0, colon);
    if (!API_KEY_PATTERN.test(key)) {
      problems.push(
        `${where}: a key must be 16-512 characters of A-Z a-z 0-9 . _ ~ + / = - (the key is not shown)`,
      );
      return;
    }
    if (seen.has(key)) {
      problems.push(`${where}: duplicate key`);
      return;
    }
    seen.add(key);
    const config: ApiKeyConfig = {
      id: apiKeyFingerprint(key),
      key,
      ...(name === 'COGNITION_ADMIN_API_KEYS' ? { admin: true } : {}),
    };
    if (colon !== -1) {
      const scopes: Record<string, string> = {};
      for (const pair of entry.slice(colon + 1).split(';')) {
        const eq = pair.indexOf('=');
        const scopeKey = eq === -1 ? '' : pair.slice(0, eq).trim().toLowerCase();
        const value = eq === -1 ? '' : pair.slice(eq + 1).trim();
        if (!SCOPE_KEY_PATTERN.test(scopeKey) || value.length === 0) {
          problems.push(
            `${where}: expected scopes as scopeKey=value;scopeKey=value, got "${pair}"`,
          );
          return;
        }
        scopes[scopeKey] = value;
      }
      config.scopes = scopes;
    }
    keys.push(config);
  });
  return keys;
}

/**
 * One list of keys: the ordinary ones, then the admin ones. A key in both lists is an admin key,
 * and must pin the same scopes in both (otherwise which scopes apply would be a guess).
 */
export function mergeAdminKeys(
  keys: ApiKeyConfig[],
  adminKeys: ApiKeyConfig[],
  problems: string[],
): ApiKeyConfig[] {
  const admins = new Map(adminKeys.map((key) => [key.key, key]));
  const merged = keys.filter((key) => {
    const admin = admins.get(key.key);
    if (!admin) return true;
    if (JSON.stringify(admin.scopes ?? {}) !== JSON.stringify(key.scopes ?? {})) {
      problems.push(
        `COGNITION_ADMIN_API_KEYS: a key also in COGNITION_API_KEYS pins other scopes there (${key.id})`,
      );
    }
    return false;
  });
  return [...merged, ...adminKeys];
}
