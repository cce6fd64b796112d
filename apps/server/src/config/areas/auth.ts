import { createHash } from 'node:crypto';
import type { AreaBuilder, SettingsReader } from '../settings';
import { need } from '../settings';
import type { ApiKeyConfig, ServerConfig } from '../types';
import { list } from '../values';

// Who may call and what they see: scoping (COGNITION_SCOPING_ENABLED, COGNITION_SCOPE_KEYS) and
// the API keys (COGNITION_API_KEYS, COGNITION_ADMIN_API_KEYS): their syntax, their ids, the one
// list the two variables make, and the scopes they pin.

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
function parseApiKeys(
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
function mergeAdminKeys(
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

export function readAuth(
  settings: SettingsReader,
): AreaBuilder<Pick<ServerConfig, 'scoping' | 'apiKeys'>> {
  const scopingEnabled = settings.read('COGNITION_SCOPING_ENABLED');
  const scopeKeys = list(settings.read('COGNITION_SCOPE_KEYS') ?? '').map((k) => k.toLowerCase());
  const keyProblems: string[] = [];
  const keys = parseApiKeys(settings.read('COGNITION_API_KEYS') ?? '', keyProblems);
  for (const problem of keyProblems.splice(0)) settings.invalid('COGNITION_API_KEYS', problem);
  const adminKeys = parseApiKeys(
    settings.read('COGNITION_ADMIN_API_KEYS') ?? '',
    keyProblems,
    'COGNITION_ADMIN_API_KEYS',
  );
  for (const problem of keyProblems.splice(0)) {
    settings.invalid('COGNITION_ADMIN_API_KEYS', problem);
  }
  const apiKeys = mergeAdminKeys(keys, adminKeys, keyProblems);
  for (const problem of keyProblems.splice(0)) settings.check(problem);

  if (scopingEnabled) {
    if (scopeKeys.length === 0) {
      settings.check('COGNITION_SCOPE_KEYS: scoping is enabled but no scope keys are configured');
    }
    for (const key of scopeKeys) {
      if (!SCOPE_KEY_PATTERN.test(key)) {
        settings.check(
          `COGNITION_SCOPE_KEYS: "${key}" is not a valid scope key (lowercase letters, digits, - and _)`,
        );
      }
    }
    if (new Set(scopeKeys).size !== scopeKeys.length) {
      settings.check('COGNITION_SCOPE_KEYS: duplicate scope keys');
    }
  }
  apiKeys.forEach((apiKey, index) => {
    if (!apiKey.scopes) return;
    // Admin keys are named by id: their entry number is of the other list.
    const where = apiKey.admin
      ? `COGNITION_ADMIN_API_KEYS key ${apiKey.id}`
      : `COGNITION_API_KEYS entry ${index + 1}`;
    if (!scopingEnabled) {
      settings.check(`${where}: carries scopes but COGNITION_SCOPING_ENABLED is false`);
      return;
    }
    for (const key of Object.keys(apiKey.scopes)) {
      if (!scopeKeys.includes(key)) {
        settings.check(
          `${where}: scope key "${key}" is not one of COGNITION_SCOPE_KEYS (${scopeKeys.join(', ')})`,
        );
      }
    }
  });
  return () => ({
    scoping: { enabled: need(scopingEnabled), keys: scopingEnabled ? scopeKeys : [] },
    apiKeys,
  });
}
