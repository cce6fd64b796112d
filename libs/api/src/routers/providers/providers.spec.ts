import { toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { collect, createApiTestBed, trpcErrorOf } from '../../testing/test-bed';

const SECRET = 'sk-registry-secret-4242';
const LOCAL = {
  id: 'local',
  kind: 'openai_compatible',
  model: 'local-model',
  baseUrl: 'http://127.0.0.1:9/v1',
  apiKey: SECRET,
};

async function failure(call: Promise<unknown>): Promise<{ status: number; paths: string[] }> {
  const { status, body } = toHttpError(await trpcErrorOf(call));
  return { status, paths: (body.errors ?? []).map((issue) => issue.path) };
}

describe('providers registry (tRPC)', () => {
  let bed: ApiTestBed;
  beforeEach(async () => {
    bed = await createApiTestBed();
  });
  afterEach(() => bed.cleanup());
  const admin = () => bed.as({}, { admin: true });

  it('lists the configured provider as read-only, without any key', async () => {
    const providers = await bed.as().providers.list();
    expect(providers).toEqual([
      expect.objectContaining({ id: 'fake', source: 'file', readOnly: true, version: null }),
    ]);
    expect(JSON.stringify(providers)).not.toMatch(/apiKey"/);
  });

  it('never answers with the API key, and keeps the stored key when an update leaves it out', async () => {
    const created = await admin().providers.create(LOCAL);
    expect(created).toMatchObject({ id: 'local', source: 'api', version: 1, apiKeySet: true });
    expect(JSON.stringify(created)).not.toContain(SECRET);
    const updated = await admin().providers.update({
      id: 'local',
      kind: 'openai_compatible',
      model: 'local-model',
      models: ['other-model'],
      baseUrl: 'http://127.0.0.1:9/v1',
      expectedVersion: 1,
    });
    expect(updated).toMatchObject({
      version: 2,
      apiKeySet: true,
      models: ['local-model', 'other-model'],
    });
    expect((await bed.storage.registry.get('provider', 'local'))?.data['apiKey']).toBe(SECRET);
    for (const answer of [
      await bed.as().providers.list(),
      await bed.as().providers.get({ id: 'local' }),
    ]) {
      expect(JSON.stringify(answer)).not.toContain(SECRET);
    }
    const removed = await admin().providers.update({ ...LOCAL, apiKey: null });
    expect(removed.apiKeySet).toBe(false);
  });

  it('validates like the providers file, naming the field', async () => {
    expect(await failure(admin().providers.create({ ...LOCAL, baseUrl: 'ftp://x' }))).toEqual({
      status: 422,
      paths: ['baseUrl'],
    });
    expect(
      await failure(admin().providers.create({ id: 'oa', kind: 'openai', model: 'gpt-4o' })),
    ).toEqual({ status: 422, paths: ['apiKey'] });
    expect((await failure(admin().providers.create({ ...LOCAL, kind: 'mystery' }))).paths).toEqual([
      'kind',
    ]);
    expect((await failure(admin().providers.create({ ...LOCAL, id: 'no spaces' }))).paths).toEqual([
      'id',
    ]);
  });

  it('keeps configured providers read-only and refuses writes without an admin key', async () => {
    expect((await failure(admin().providers.create({ ...LOCAL, id: 'fake' }))).status).toBe(409);
    expect((await failure(admin().providers.delete({ id: 'fake' }))).status).toBe(409);
    expect((await failure(bed.as().providers.create(LOCAL))).status).toBe(403);
    expect((await failure(admin().providers.delete({ id: 'nobody' }))).status).toBe(404);
  });

  it('serves a new model to agents and sessions at once: the next run uses it', async () => {
    const caller = bed.as();
    expect(
      (await failure(caller.sessions.create({ config: { model: 'local-model' } }))).paths,
    ).toEqual(['config.model']);
    await admin().providers.create(LOCAL);
    const session = await caller.sessions.create({ config: { model: 'local-model' } });
    bed.model.push({ text: ['ok'] });
    const sent = await caller.messages.send({ sessionId: session.id, content: 'hi' });
    const events = await collect(
      await caller.runs.events({ sessionId: session.id, runId: sent.run.id }),
    );
    expect(JSON.stringify(events)).toContain('"done"');
    const run = await bed.storage.runs.get(sent.run.id);
    expect(run).toMatchObject({ status: 'completed' });
    const usage = await caller.sessions.usage({ id: session.id });
    // Metered on the new provider (its id, not the model name, quoted).
    expect(JSON.stringify(usage)).toContain('"local"');
  });
});
