/**
 * What the dashboard sends with every request: an API key (as the bearer token) and the scope
 * headers when scoping is on. Kept in sessionStorage: it lasts as long as the tab, never longer.
 */
export interface Credentials {
  apiKey: string | null;
  scopes: Record<string, string>;
}

const KEY = 'cognition-admin-credentials';

const ANONYMOUS: Credentials = { apiKey: null, scopes: {} };

export function loadCredentials(storage: Storage = sessionStorage): Credentials {
  try {
    const parsed = JSON.parse(storage.getItem(KEY) ?? 'null') as Partial<Credentials> | null;
    if (!parsed) return ANONYMOUS;
    return {
      apiKey: typeof parsed.apiKey === 'string' && parsed.apiKey !== '' ? parsed.apiKey : null,
      scopes: parsed.scopes && typeof parsed.scopes === 'object' ? parsed.scopes : {},
    };
  } catch {
    return ANONYMOUS;
  }
}

export function saveCredentials(credentials: Credentials, storage: Storage = sessionStorage): void {
  storage.setItem(KEY, JSON.stringify(credentials));
}

export function clearCredentials(storage: Storage = sessionStorage): void {
  storage.removeItem(KEY);
}

/** "user=alice, project=p1" -> { user: 'alice', project: 'p1' }; blank pairs are dropped. */
export function parseScopes(text: string): Record<string, string> {
  const scopes: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const [key = '', ...rest] = pair.split('=');
    const value = rest.join('=').trim();
    if (key.trim() !== '' && value !== '') scopes[key.trim().toLowerCase()] = value;
  }
  return scopes;
}
