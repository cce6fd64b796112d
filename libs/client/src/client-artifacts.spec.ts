import type { AppRouter } from '@cognition/api';
import type { TestApiServer } from '@cognition/api/testing';
import { TRPCClientError } from '@trpc/client';
import { randomBytes } from 'node:crypto';
import type { CognitionClient } from './client';
import { createCognitionClient } from './client';
import type { TestBackend } from './testing/test-backend';
import { createTestBackend, startScopedApiServer } from './testing/test-backend';

describe('the typed client: artifacts.*', () => {
  let backend: TestBackend;
  let server: TestApiServer;

  beforeAll(async () => {
    backend = await createTestBackend();
    server = await startScopedApiServer(backend, { id: 'test', key: 'sk-test' });
  });

  afterAll(async () => {
    await server.close();
    await backend.cleanup();
  });

  function clientFor(user: string): CognitionClient {
    return createCognitionClient({ url: server.url, apiKey: 'sk-test', scopes: { user } });
  }

  async function codeOf(call: Promise<unknown>): Promise<unknown> {
    try {
      await call;
    } catch (error) {
      if (error instanceof TRPCClientError) return (error as TRPCClientError<AppRouter>).data?.code;
      throw error;
    }
    throw new Error('expected the call to fail');
  }

  it('creates, updates, reads versions and bytes, lists, and deletes with dates revived', async () => {
    const alice = clientFor('alice');
    const bytes = randomBytes(1024);
    const created = await alice.artifacts.create.mutate({
      name: 'blob.bin',
      visibility: 'public',
      encoding: 'base64',
      content: bytes.toString('base64'),
    });
    expect(created.createdAt).toBeInstanceOf(Date);
    expect(created.scopes).toEqual({ user: 'alice' });
    const updated = await alice.artifacts.update.mutate({
      id: created.id,
      content: 'now text',
      expectedVersion: 1,
    });
    expect(updated.version).toBe(2);
    const first = await alice.artifacts.get.query({ id: created.id, version: 1 });
    expect(Buffer.from(first.content, 'base64').equals(bytes)).toBe(true);
    expect((await alice.artifacts.get.query({ id: created.id })).content).toBe('now text');
    const versions = await alice.artifacts.versions.query({ id: created.id });
    expect(versions.map((v) => [v.version, v.encoding])).toEqual([
      [1, 'base64'],
      [2, 'utf8'],
    ]);
    expect((await alice.artifacts.list.query({ visibility: 'public' })).total).toBe(1);
    expect(await codeOf(clientFor('bob').artifacts.get.query({ id: created.id }))).toBe(
      'NOT_FOUND',
    );
    expect(
      await codeOf(
        alice.artifacts.update.mutate({ id: created.id, content: 'x', expectedVersion: 1 }),
      ),
    ).toBe('VERSION_CONFLICT');
    expect(await alice.artifacts.delete.mutate({ id: created.id })).toEqual({ deleted: true });
    expect((await alice.artifacts.list.query()).total).toBe(0);
  });
});
