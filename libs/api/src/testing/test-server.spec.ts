import type { StorageBackend } from '@cognition/storage';
import type { ApiTestBed } from './test-bed';
import { createApiTestBed } from './test-bed';
import type { TestApiServer } from './test-server';
import { startTestApiServer } from './test-server';

interface WireError {
  error: {
    json: { message: string; data: { code: string; httpStatus: number; errors: unknown[] } };
  };
}

describe('startTestApiServer (tRPC over HTTP)', () => {
  let bed: ApiTestBed;
  let storage: StorageBackend;
  let server: TestApiServer;

  beforeAll(async () => {
    bed = await createApiTestBed();
    storage = bed.storage;
    server = await startTestApiServer({
      storage,
      runs: bed.runs,
      context: bed.services.context,
      registry: bed.services.registry,
      auth: {
        scoping: { enabled: true, keys: ['user'] },
        apiKeys: [{ id: 'k', key: 'secret-key' }],
      },
    });
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    await server.close();
    await bed.cleanup();
  });

  async function get(
    path: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: WireError }> {
    const response = await fetch(`${server.url}/${path}`, { headers });
    return { status: response.status, body: (await response.json()) as WireError };
  }

  const authorized = { authorization: 'Bearer secret-key', 'x-cognition-scope-user': 'u1' };

  it('answers auth failures from context creation with 401/403, not 500', async () => {
    const missingKey = await get('sessions.list');
    expect(missingKey.status).toBe(401);
    expect(missingKey.body.error.json.data.code).toBe('UNAUTHORIZED');
    expect(JSON.stringify(missingKey.body)).not.toContain('secret-key');

    const missingScope = await get('sessions.list', { authorization: 'Bearer secret-key' });
    expect(missingScope.status).toBe(403);
    expect(missingScope.body.error.json.message).toContain('X-Cognition-Scope-User');
  });

  it('sends 422 with field issues for bad input and 404 for unknown ids and paths', async () => {
    const input = encodeURIComponent(JSON.stringify({ json: { limit: 'ten' } }));
    const invalid = await get(`sessions.list?input=${input}`, authorized);
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.json.data).toMatchObject({
      code: 'VALIDATION_ERROR',
      errors: [{ path: 'limit', message: expect.any(String) as string }],
    });

    const unknownId = encodeURIComponent(JSON.stringify({ json: { id: 'nope' } }));
    const missing = await get(`sessions.get?input=${unknownId}`, authorized);
    expect(missing.status).toBe(404);
    expect(missing.body.error.json).toMatchObject({
      message: 'Session not found: nope',
      data: { code: 'SESSION_NOT_FOUND' },
    });

    const noProcedure = await get('sessions.explode', authorized);
    expect(noProcedure.status).toBe(404);
    expect(noProcedure.body.error.json.data.code).toBe('NOT_FOUND');
  });

  it('hides the message of an unexpected failure', async () => {
    jest
      .spyOn(storage.sessions, 'list')
      .mockRejectedValueOnce(new Error('disk /var/db is corrupt'));
    const failed = await get('sessions.list', authorized);
    expect(failed.status).toBe(500);
    expect(failed.body.error.json.message).toBe('Internal server error');
    expect(failed.body.error.json.data.code).toBe('INTERNAL_ERROR');
    expect(JSON.stringify(failed.body)).not.toContain('/var/db');
  });
});
