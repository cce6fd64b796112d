import type { AgentEventEnvelope } from '@cognition/contracts';
import type { TestRuntime } from '../testing/test-runtime';
import { createTestRuntime, sendAndCollect } from '../testing/test-runtime';
import { FakeOpenAIServer } from '../testing/fake-openai-server';

const TEAM = { team: 't1' };
const OTHER = { team: 't2' };

const artifactEvents = (events: AgentEventEnvelope[]) =>
  events.filter((e) => e.event.type === 'artifact').map((e) => e.event);
const toolResults = (events: AgentEventEnvelope[]) =>
  events.flatMap((e) => (e.event.type === 'tool_result' ? [e.event] : []));

describe('issue 16: agents write and read artifacts through their tools', () => {
  let server: FakeOpenAIServer;
  let rt: TestRuntime;

  beforeEach(async () => {
    server = await FakeOpenAIServer.start();
    rt = await createTestRuntime({
      providers: {
        providers: [
          {
            id: 'local',
            kind: 'openai_compatible',
            model: 'fake-model',
            baseUrl: server.baseUrl,
            maxRetries: 0,
          },
        ],
      },
    });
  });
  afterEach(async () => {
    await rt.cleanup();
    await server.close();
  });

  const systemPromptOf = (request: number): string => {
    const content = server.requests[request]?.body.messages?.[0]?.content;
    return typeof content === 'string' ? content : '';
  };

  it('shares a public memory within the scope only, as notes and through artifact_read', async () => {
    server.enqueue(
      {
        toolCalls: [
          {
            id: 'w1',
            name: 'artifact_write',
            args: {
              name: 'findings.md',
              content: 'The build uses nx.',
              visibility: 'public',
              type: 'memory',
            },
          },
        ],
      },
      { text: 'Noted.' },
    );
    const writer = await rt.createSession('default', {}, TEAM);
    const written = await sendAndCollect(rt, writer, 'Remember how we build.');
    expect(written.types.at(-1)).toBe('done');
    expect(artifactEvents(written.events)).toEqual([
      expect.objectContaining({
        name: 'findings.md',
        artifact_type: 'memory',
        version: 1,
        action: 'created',
      }),
    ]);
    const stored = await rt.storage.artifacts.list({ name: 'findings.md' }, { scope: TEAM });
    expect(stored.artifacts[0]).toMatchObject({
      visibility: 'public',
      sessionId: writer.id,
      runId: written.run.id,
      createdBy: `run:${written.run.id}`,
    });

    const readTool = {
      toolCalls: [{ id: 'r1', name: 'artifact_read', args: { name: 'findings.md' } }],
    };
    server.enqueue(readTool, { text: 'Read it.' });
    const reader = await rt.createSession('readonly', {}, TEAM);
    const read = await sendAndCollect(rt, reader, 'How do we build?');
    expect(systemPromptOf(2)).toContain('## Memory');
    expect(systemPromptOf(2)).toContain('The build uses nx.');
    expect(toolResults(read.events)[0]).toMatchObject({ exit_code: 0 });
    expect(toolResults(read.events)[0]?.output).toContain('The build uses nx.');
    expect(artifactEvents(read.events)).toEqual([
      expect.objectContaining({ name: 'findings.md', action: 'read', version: 1 }),
    ]);

    server.enqueue(readTool, { text: 'Nothing.' });
    const outsider = await rt.createSession('default', {}, OTHER);
    const denied = await sendAndCollect(rt, outsider, 'How do we build?');
    expect(systemPromptOf(4)).not.toContain('The build uses nx.');
    expect(toolResults(denied.events)[0]).toMatchObject({ exit_code: 1 });
    expect(toolResults(denied.events)[0]?.output).toContain('No artifact findings.md');
    expect(artifactEvents(denied.events)).toEqual([]);
  });

  it('gives policies first and within the budget, deletes scratch at a good end, keeps it on failure', async () => {
    await rt.storage.artifacts.create(
      { name: 'rules', type: 'policy', visibility: 'public', content: 'Always answer in French.' },
      { scope: TEAM },
    );
    const session = await rt.createSession('default', {}, TEAM);
    const scratch = (id: string) => ({
      toolCalls: [
        { id, name: 'artifact_write', args: { name: `tmp-${id}`, content: 'x', type: 'scratch' } },
      ],
    });
    server.enqueue(scratch('s1'), { text: 'Done.' });
    const good = await sendAndCollect(rt, session, 'Work.');
    expect(systemPromptOf(0)).toContain('## Policies');
    expect(systemPromptOf(0)).toContain('Always answer in French.');
    expect(artifactEvents(good.events)).toHaveLength(1);
    expect((await rt.storage.artifacts.list({ type: 'scratch' }, { scope: TEAM })).total).toBe(0);

    server.enqueue(scratch('s2'), { status: 400, errorMessage: 'bad request' });
    const failed = await sendAndCollect(rt, session, 'Work again.');
    expect(failed.types.at(-1)).toBe('error');
    const kept = await rt.storage.artifacts.list({ type: 'scratch' }, { scope: TEAM });
    expect(kept.artifacts.map((a) => a.name)).toEqual(['tmp-s2']);
  });

  it('offers artifact_write to the default agent and only list/read to the readonly agent', async () => {
    server.enqueue({ text: 'a' }, { text: 'b' });
    await sendAndCollect(rt, await rt.createSession('default'), 'hi');
    await sendAndCollect(rt, await rt.createSession('readonly'), 'hi');
    const names = (i: number) => (server.requests[i]?.body.tools ?? []).map((t) => t.function.name);
    expect(names(0)).toEqual(
      expect.arrayContaining(['artifact_list', 'artifact_read', 'artifact_write']),
    );
    expect(names(1)).toEqual(expect.arrayContaining(['artifact_list', 'artifact_read']));
    expect(names(1)).not.toContain('artifact_write');
  });
});
