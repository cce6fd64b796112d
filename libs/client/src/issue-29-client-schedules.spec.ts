import type { AppRouter } from '@cognition/api';
import type { TestApiServer } from '@cognition/api/testing';
import type { TRPCClientError } from '@trpc/client';
import { createCognitionClient } from './client';
import type { TestBackend } from './testing/test-backend';
import { createTestBackend, startScopedApiServer } from './testing/test-backend';

/** The typed client's `schedules.*` (issue 29): dates revived, fields named, tenants apart. */
describe('the typed client: schedules.*', () => {
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
  const clientFor = (user: string) =>
    createCognitionClient({ url: server.url, apiKey: 'sk-test', scopes: { user } });

  it('creates, lists, triggers, lists runs; refuses a bad expression naming it', async () => {
    const alice = clientFor('alice');
    const session = await alice.sessions.create.mutate({});
    const schedule = await alice.schedules.create.mutate({
      expression: '0 9 * * 1-5',
      timezone: 'America/New_York',
      target: { kind: 'session', sessionId: session.id },
      content: 'standup notes',
    });
    expect(schedule.nextFireAt).toBeInstanceOf(Date);
    expect((await alice.schedules.list.query({ sessionId: session.id })).total).toBe(1);
    expect((await clientFor('bob').schedules.list.query()).total).toBe(0);
    backend.model.push({ text: 'noted' });
    const fire = await alice.schedules.trigger.mutate({ id: schedule.id });
    expect(fire.dueAt).toBeInstanceOf(Date);
    expect(fire.run?.sessionId).toBe(session.id);
    expect((await alice.schedules.runs.query({ id: schedule.id })).map((f) => f.runId)).toEqual([
      fire.runId,
    ]);
    try {
      await alice.schedules.update.mutate({ id: schedule.id, expression: '0 9 * 13 *' });
      throw new Error('expected a refusal');
    } catch (error) {
      const data = (error as TRPCClientError<AppRouter>).data;
      expect(data?.code).toBe('VALIDATION_ERROR');
      expect(data?.errors).toEqual([
        { path: 'expression', message: 'month 13 is out of range 1-12' },
      ]);
    }
  });
});
