import { toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { collect, createApiTestBed, trpcErrorOf } from '../../testing/test-bed';

const REVIEWER = {
  name: 'reviewer',
  description: 'Reviews code',
  tools: ['read_file', 'grep'],
  temperature: 0.2,
  system_prompt: 'You review code. Version one.',
  interrupt_on: { execute: true },
};

/** The status and field paths of a failed call, as REST would answer them. */
async function failure(call: Promise<unknown>): Promise<{ status: number; paths: string[] }> {
  const { status, body } = toHttpError(await trpcErrorOf(call));
  return { status, paths: (body.errors ?? []).map((issue) => issue.path) };
}

describe('agents registry (tRPC)', () => {
  let bed: ApiTestBed;
  beforeEach(async () => {
    bed = await createApiTestBed();
  });
  afterEach(() => bed.cleanup());
  const admin = () => bed.as({}, { admin: true });

  it('lists built-in and configured agents as read-only, with their source', async () => {
    const agents = await bed.as().agents.list();
    expect(agents.map((a) => [a.name, a.source, a.read_only, a.version])).toEqual([
      ['default', 'builtin', true, null],
      ['readonly', 'builtin', true, null],
      ['researcher', 'file', true, null],
      ['helper', 'file', true, null],
    ]);
  });

  it('creates, reads, replaces at a version and deletes an API agent', async () => {
    const created = await admin().agents.create(REVIEWER);
    expect(created).toMatchObject({
      name: 'reviewer',
      source: 'api',
      read_only: false,
      version: 1,
      mode: 'primary',
      tools: ['read_file', 'grep'],
      temperature: 0.2,
      interrupt_on: { execute: { allowed: ['approve', 'edit', 'reject'] } },
      system_prompt: 'You review code. Version one.',
    });
    expect(await bed.as().agents.get({ name: 'reviewer' })).toEqual(created);

    const updated = await admin().agents.update({
      ...REVIEWER,
      system_prompt: 'Version two.',
      expected_version: 1,
    });
    expect(updated).toMatchObject({ version: 2, system_prompt: 'Version two.' });
    const stale = await failure(
      admin().agents.update({ ...REVIEWER, system_prompt: 'lost', expected_version: 1 }),
    );
    expect(stale.status).toBe(409);
    expect((await bed.as().agents.get({ name: 'reviewer' })).system_prompt).toBe('Version two.');

    expect((await failure(admin().agents.create(REVIEWER))).status).toBe(409);
    expect(
      (await failure(admin().agents.delete({ name: 'reviewer', expected_version: 1 }))).status,
    ).toBe(409);
    await admin().agents.delete({ name: 'reviewer', expected_version: 2 });
    expect((await failure(bed.as().agents.get({ name: 'reviewer' }))).status).toBe(404);
    expect((await failure(admin().agents.delete({ name: 'reviewer' }))).status).toBe(404);
  });

  it.each([
    ['an unknown tool', { tools: ['read_file', 'teleport'] }, 'tools.1'],
    ['a model no provider serves', { model: 'gpt-9000' }, 'model'],
    ['a temperature out of range', { temperature: 7 }, 'temperature'],
    [
      'interrupt_on naming an unknown tool',
      { interrupt_on: { deploy: true } },
      'interrupt_on.deploy',
    ],
    ['an unknown field', { colour: 'blue' }, '(root)'],
    [
      'a summary model no provider serves',
      { context: { summary_model: 'nope' } },
      'context.summary_model',
    ],
  ])('refuses %s with 422 naming the field', async (_what, change, path) => {
    const { status, paths } = await failure(admin().agents.create({ ...REVIEWER, ...change }));
    expect(status).toBe(422);
    expect(paths).toEqual([path]);
    expect(await bed.storage.registry.list()).toEqual([]);
  });

  it('accepts a model a configured provider serves', async () => {
    const agent = await admin().agents.create({ ...REVIEWER, model: 'gpt-4o' });
    expect(agent.model).toBe('gpt-4o');
  });

  it('keeps built-in and configured agents read-only, and their names taken', async () => {
    for (const name of ['default', 'researcher']) {
      expect((await failure(admin().agents.create({ ...REVIEWER, name }))).status).toBe(409);
      expect((await failure(admin().agents.update({ ...REVIEWER, name }))).status).toBe(409);
      expect((await failure(admin().agents.delete({ name }))).status).toBe(409);
    }
    const error = await trpcErrorOf(admin().agents.delete({ name: 'default' }));
    expect(error.message).toMatch(/built into the server.*read-only/);
  });

  it('lets any caller read but only an admin write (403 FORBIDDEN naming the admin keys)', async () => {
    const error = await trpcErrorOf(bed.as().agents.create(REVIEWER));
    expect(toHttpError(error).status).toBe(403);
    expect(error.message).toMatch(/COGNITION_ADMIN_API_KEYS/);
    await admin().agents.create(REVIEWER);
    expect((await failure(bed.as().agents.update(REVIEWER))).status).toBe(403);
    expect((await failure(bed.as().agents.delete({ name: 'reviewer' }))).status).toBe(403);
    expect((await bed.as().agents.get({ name: 'reviewer' })).version).toBe(1);
  });

  it('binds sessions to an API agent, applies a change at the next run, and refuses sends once it is deleted', async () => {
    await admin().agents.create(REVIEWER);
    const caller = bed.as();
    const session = await caller.sessions.create({ agentName: 'reviewer' });
    const systemPrompts = () => bed.model.calls.map((call) => call.messages[0]?.text ?? '');

    bed.model.push({ text: ['one'] });
    const first = await caller.messages.send({ sessionId: session.id, content: 'hi' });
    await collect(await caller.runs.events({ sessionId: session.id, runId: first.run.id }));
    expect(systemPrompts()[0]).toContain('Version one.');
    expect(bed.model.calls[0]?.tools.sort()).toEqual(['grep', 'read_file']);

    await admin().agents.update({ ...REVIEWER, system_prompt: 'Version two.', tools: ['ls'] });
    bed.model.push({ text: ['two'] });
    const second = await caller.messages.send({ sessionId: session.id, content: 'again' });
    await collect(await caller.runs.events({ sessionId: session.id, runId: second.run.id }));
    expect(systemPrompts()[1]).toContain('Version two.');
    expect(systemPrompts()[1]).not.toContain('Version one.');
    expect(bed.model.calls[1]?.tools).toEqual(['ls']);

    await admin().agents.delete({ name: 'reviewer' });
    const refused = await trpcErrorOf(
      caller.messages.send({ sessionId: session.id, content: 'x' }),
    );
    expect(toHttpError(refused).status).toBe(409);
    expect(refused.message).toContain('"reviewer" no longer exists');
    // A session can no longer be bound to it either.
    expect((await failure(caller.sessions.create({ agentName: 'reviewer' }))).paths).toEqual([
      'agentName',
    ]);
  });
});
