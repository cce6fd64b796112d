import { toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { createApiTestBed, trpcErrorOf } from '../../testing/test-bed';

const ALICE = { user: 'alice', project: 'p1' };
const BOB = { user: 'bob', project: 'p1' };

async function statusOf(call: Promise<unknown>) {
  const { status, body } = toHttpError(await trpcErrorOf(call));
  return { status, code: body.code, paths: body.errors?.map((issue) => issue.path) ?? [] };
}

describe('artifacts router', () => {
  let bed: ApiTestBed;

  beforeEach(async () => {
    bed = await createApiTestBed();
  });

  afterEach(async () => {
    await bed.cleanup();
  });

  it('creates, reads, versions, lists and deletes within the caller scope', async () => {
    const alice = bed.as(ALICE);
    const session = await alice.sessions.create({ title: 'work' });
    const created = await alice.artifacts.create({
      name: 'plan.md',
      content: '# v1',
      contentType: 'text/markdown',
      sessionId: session.id,
      metadata: { kind: 'plan' },
    });
    expect(created).toMatchObject({ version: 1, scopes: ALICE, createdBy: 'api' });
    const updated = await alice.artifacts.update({
      id: created.id,
      content: '# v2',
      expectedVersion: 1,
    });
    expect(updated.version).toBe(2);
    expect((await alice.artifacts.get({ id: created.id, version: 1 })).content).toBe('# v1');
    expect((await alice.artifacts.get({ id: created.id })).content).toBe('# v2');
    expect((await alice.artifacts.versions({ id: created.id })).map((v) => v.version)).toEqual([
      1, 2,
    ]);
    const page = await alice.artifacts.list({ metadata: { kind: 'plan' } });
    expect(page.artifacts.map((a) => a.id)).toEqual([created.id]);
    expect(await alice.artifacts.delete({ id: created.id })).toEqual({ deleted: true });
    expect((await statusOf(alice.artifacts.get({ id: created.id }))).status).toBe(404);
  });

  it('answers 404 for another scope on every procedure, and changes nothing', async () => {
    const alice = bed.as(ALICE);
    const bob = bed.as(BOB);
    const a = await alice.artifacts.create({ name: 'p', visibility: 'public', content: 'x' });
    for (const call of [
      bob.artifacts.get({ id: a.id }),
      bob.artifacts.versions({ id: a.id }),
      bob.artifacts.update({ id: a.id, content: 'bob' }),
      bob.artifacts.delete({ id: a.id }),
    ]) {
      expect(await statusOf(call)).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    }
    expect((await bob.artifacts.list()).total).toBe(0);
    expect((await alice.artifacts.get({ id: a.id })).content).toBe('x');
    const session = await alice.sessions.create({});
    expect(
      await statusOf(bob.artifacts.create({ name: 'n', content: 'x', sessionId: session.id })),
    ).toMatchObject({ status: 404, code: 'SESSION_NOT_FOUND' });
  });

  it('maps conflicts to 409 and oversized content to 413', async () => {
    const alice = bed.as(ALICE);
    const a = await alice.artifacts.create({ name: 'n', visibility: 'public', content: 'x' });
    expect(
      await statusOf(alice.artifacts.create({ name: 'n', visibility: 'public', content: 'y' })),
    ).toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(
      await statusOf(alice.artifacts.update({ id: a.id, content: 'z', expectedVersion: 7 })),
    ).toMatchObject({ status: 409, code: 'VERSION_CONFLICT' });
    expect(
      await statusOf(
        alice.artifacts.update({ id: a.id, content: 'z'.repeat(10 * 1024 * 1024 + 1) }),
      ),
    ).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE', paths: ['content'] });
  });

  it.each([
    ['create without a name', 'create', { content: 'x', visibility: 'public' }, 'name'],
    [
      'create with an unknown type',
      'create',
      { name: 'n', content: 'x', visibility: 'public', type: 'blob' },
      'type',
    ],
    ['create private without a session', 'create', { name: 'n', content: 'x' }, 'sessionId'],
    [
      'create run without a run',
      'create',
      { name: 'n', content: 'x', visibility: 'run', sessionId: 's' },
      'runId',
    ],
    [
      'create with bad base64',
      'create',
      { name: 'n', content: '!!', encoding: 'base64', visibility: 'public' },
      'content',
    ],
    [
      'create with a bad content type',
      'create',
      { name: 'n', content: 'x', visibility: 'public', contentType: 'plain' },
      'contentType',
    ],
    [
      'create with scopes in the body',
      'create',
      { name: 'n', content: 'x', visibility: 'public', scopes: { user: 'eve' } },
      '(root)',
    ],
    ['list with a bad visibility', 'list', { visibility: 'secret' }, 'visibility'],
    ['list with a bad limit', 'list', { limit: 0 }, 'limit'],
    ['get with version 0', 'get', { id: 'a', version: 0 }, 'version'],
    [
      'update with a bad expected version',
      'update',
      { id: 'a', expectedVersion: -1 },
      'expectedVersion',
    ],
    ['update with an encoding alone', 'update', { id: 'a', encoding: 'base64' }, 'content'],
    ['update with an unknown field', 'update', { id: 'a', name: 'renamed' }, '(root)'],
    ['delete without an id', 'delete', {}, 'id'],
    ['versions with an empty id', 'versions', { id: '' }, 'id'],
  ] as const)('%s: 422 naming the field', async (_what, procedure, input, field) => {
    const alice = bed.as(ALICE) as unknown as Record<
      string,
      Record<string, (input: unknown) => Promise<unknown>>
    >;
    const call = alice['artifacts']?.[procedure]?.(input) ?? Promise.resolve();
    const result = await statusOf(call);
    expect(result).toMatchObject({ status: 422, code: 'VALIDATION_ERROR' });
    expect(result.paths).toContain(field);
    expect((await bed.storage.artifacts.list({}, { scope: {} })).total).toBe(0);
  });
});
