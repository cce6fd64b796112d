import type * as NodeCrypto from 'node:crypto';
import type { AuthConfig } from './auth';
import { requireAdmin, resolveCaller, scopeHeaderName } from './auth';
import { ApiError, toHttpError } from './errors';

const OPEN: AuthConfig = { scoping: { enabled: false, keys: [] }, apiKeys: [] };
const SCOPED: AuthConfig = { scoping: { enabled: true, keys: ['user', 'project'] }, apiKeys: [] };
const KEYED: AuthConfig = {
  scoping: { enabled: true, keys: ['user', 'project'] },
  apiKeys: [
    { id: 'ops', key: 'sk-ops-0123456789' },
    { id: 'alice-bot', key: 'sk-alice-abcdef', scopes: { user: 'alice' } },
  ],
};

// The module object auth.ts calls into (a namespace import would be a copy under CommonJS).
const nodeCrypto = jest.requireActual<typeof NodeCrypto>('node:crypto');

function apiErrorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected resolveCaller to throw');
}

describe('scopeHeaderName', () => {
  it('spells the header of a scope key', () => {
    expect(scopeHeaderName('user')).toBe('X-Cognition-Scope-User');
    expect(scopeHeaderName('project-id')).toBe('X-Cognition-Scope-Project-Id');
  });
});

describe('resolveCaller', () => {
  afterEach(() => jest.restoreAllMocks());

  describe('scoping', () => {
    it('ignores scope headers when scoping is disabled (empty scope sees everything)', () => {
      expect(resolveCaller({ 'x-cognition-scope-user': 'alice' }, OPEN)).toEqual({
        scope: {},
        admin: true,
      });
    });

    it('reads every configured scope header, case-insensitively, and nothing else', () => {
      const caller = resolveCaller(
        {
          'X-COGNITION-SCOPE-USER': 'alice',
          'x-cognition-scope-project': 'p1',
          'x-cognition-scope-extra': 'z',
        },
        SCOPED,
      );
      // No key configured: dev mode, where every caller may change the registry.
      expect(caller).toEqual({ scope: { user: 'alice', project: 'p1' }, admin: true });
    });

    it('fails closed with 403 naming every missing header', () => {
      const none = apiErrorOf(() => resolveCaller({}, SCOPED));
      expect(none.code).toBe('FORBIDDEN');
      expect(none.message).toContain('X-Cognition-Scope-User');
      expect(none.message).toContain('X-Cognition-Scope-Project');
      expect(toHttpError(none)).toMatchObject({
        status: 403,
        body: {
          code: 'FORBIDDEN',
          errors: [
            { path: 'headers.X-Cognition-Scope-User', message: expect.any(String) as string },
            { path: 'headers.X-Cognition-Scope-Project', message: expect.any(String) as string },
          ],
        },
      });

      const one = apiErrorOf(() => resolveCaller({ 'x-cognition-scope-user': 'alice' }, SCOPED));
      expect(one.message).toContain('X-Cognition-Scope-Project');
      expect(one.message).not.toContain('X-Cognition-Scope-User');

      const blank = apiErrorOf(() =>
        resolveCaller({ 'x-cognition-scope-user': '  ', 'x-cognition-scope-project': 'p' }, SCOPED),
      );
      expect(blank.message).toContain('X-Cognition-Scope-User');
    });

    it('rejects oversized and contradictory scope headers as validation errors', () => {
      const huge = apiErrorOf(() =>
        resolveCaller(
          { 'x-cognition-scope-user': 'a'.repeat(5000), 'x-cognition-scope-project': 'p' },
          SCOPED,
        ),
      );
      expect(toHttpError(huge).status).toBe(422);
      const twice = apiErrorOf(() =>
        resolveCaller(
          { 'x-cognition-scope-user': ['a', 'b'], 'x-cognition-scope-project': 'p' },
          SCOPED,
        ),
      );
      expect(toHttpError(twice).status).toBe(422);
      expect(
        resolveCaller(
          { 'x-cognition-scope-user': ['a', 'a'], 'x-cognition-scope-project': 'p' },
          SCOPED,
        ),
      ).toEqual({ scope: { user: 'a', project: 'p' }, admin: true });
    });

    it('lets a lenient route through without scope headers', () => {
      expect(
        resolveCaller({ 'x-cognition-scope-user': 'alice' }, SCOPED, { requireAuth: false }),
      ).toEqual({
        scope: { user: 'alice' },
        admin: true,
      });
    });
  });

  describe('API keys', () => {
    const scopeHeaders = { 'x-cognition-scope-user': 'bob', 'x-cognition-scope-project': 'p1' };

    it('401s a missing key, a wrong key and a non-bearer scheme', () => {
      for (const headers of [
        scopeHeaders,
        { ...scopeHeaders, authorization: 'Bearer sk-wrong' },
        { ...scopeHeaders, authorization: 'Bearer sk-ops-012345678' },
        { ...scopeHeaders, authorization: 'Basic sk-ops-0123456789' },
        { ...scopeHeaders, authorization: 'Bearer ' },
      ]) {
        const error = apiErrorOf(() => resolveCaller(headers, KEYED));
        expect(error.code).toBe('UNAUTHORIZED');
        expect(toHttpError(error).status).toBe(401);
        expect(error.message).not.toContain('sk-');
      }
    });

    it('authenticates a valid key (any header case) and records its id, never the secret', () => {
      const caller = resolveCaller(
        { ...scopeHeaders, AUTHORIZATION: 'bearer sk-ops-0123456789' },
        KEYED,
      );
      expect(caller).toEqual({ scope: { user: 'bob', project: 'p1' }, apiKeyId: 'ops' });
      expect(JSON.stringify(caller)).not.toContain('sk-ops');
    });

    it('checks authentication before scoping', () => {
      expect(apiErrorOf(() => resolveCaller({}, KEYED)).code).toBe('UNAUTHORIZED');
    });

    it('lets a key pin scopes that override headers; unpinned keys still need headers', () => {
      const caller = resolveCaller(
        {
          authorization: 'Bearer sk-alice-abcdef',
          'x-cognition-scope-user': 'mallory',
          'x-cognition-scope-project': 'p9',
        },
        KEYED,
      );
      expect(caller).toEqual({ scope: { user: 'alice', project: 'p9' }, apiKeyId: 'alice-bot' });

      const missing = apiErrorOf(() =>
        resolveCaller({ authorization: 'Bearer sk-alice-abcdef' }, KEYED),
      );
      expect(missing.code).toBe('FORBIDDEN');
      expect(missing.message).toContain('X-Cognition-Scope-Project');
      expect(missing.message).not.toContain('X-Cognition-Scope-User');
    });

    it('applies pinned scopes even when scoping is disabled', () => {
      const config: AuthConfig = { ...KEYED, scoping: { enabled: false, keys: [] } };
      expect(resolveCaller({ authorization: 'Bearer sk-alice-abcdef' }, config)).toEqual({
        scope: { user: 'alice' },
        apiKeyId: 'alice-bot',
      });
    });

    it('lets a lenient route through without a key but still rejects a wrong one', () => {
      expect(resolveCaller({}, KEYED, { requireAuth: false })).toEqual({ scope: {} });
      const wrong = apiErrorOf(() =>
        resolveCaller({ authorization: 'Bearer nope' }, KEYED, { requireAuth: false }),
      );
      expect(wrong.code).toBe('UNAUTHORIZED');
    });

    it('marks admin keys admin and ordinary keys not; requireAdmin refuses the latter with 403', () => {
      const config: AuthConfig = {
        scoping: { enabled: false, keys: [] },
        apiKeys: [
          { id: 'ops', key: 'sk-ops-0123456789' },
          { id: 'root', key: 'sk-admin-0123456789', admin: true },
        ],
      };
      const admin = resolveCaller({ authorization: 'Bearer sk-admin-0123456789' }, config);
      expect(admin).toEqual({ scope: {}, apiKeyId: 'root', admin: true });
      expect(() => requireAdmin(admin)).not.toThrow();
      const ordinary = resolveCaller({ authorization: 'Bearer sk-ops-0123456789' }, config);
      expect(ordinary).toEqual({ scope: {}, apiKeyId: 'ops' });
      const refused = apiErrorOf(() => requireAdmin(ordinary));
      expect(toHttpError(refused).status).toBe(403);
      expect(refused.message).toContain('COGNITION_ADMIN_API_KEYS');
    });

    it('compares in constant time against every configured key, matching or not', () => {
      const spy = jest.spyOn(nodeCrypto, 'timingSafeEqual');
      resolveCaller({ ...scopeHeaders, authorization: 'Bearer sk-ops-0123456789' }, KEYED);
      expect(spy).toHaveBeenCalledTimes(KEYED.apiKeys.length);
      for (const [a, b] of spy.mock.calls) {
        expect((a as Buffer).length).toBe(32);
        expect((b as Buffer).length).toBe(32);
      }
      spy.mockClear();
      apiErrorOf(() => resolveCaller({ ...scopeHeaders, authorization: 'Bearer x' }, KEYED));
      expect(spy).toHaveBeenCalledTimes(KEYED.apiKeys.length);
    });
  });
});
