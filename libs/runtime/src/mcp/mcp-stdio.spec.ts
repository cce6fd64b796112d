import type { AgentEventEnvelope, McpServerConfigInput } from '@cognition/contracts';
import { McpServerConfigSchema } from '@cognition/contracts';
import { createLocalSandbox } from '@cognition/sandbox-local';
import type { AgentDefinition } from '../agents/agent';
import type { TestRuntime } from '../testing/test-runtime';
import {
  collect,
  createTestRuntime,
  sendAndCollect,
  waitFor,
  match,
} from '../testing/test-runtime';
import { MCP_TEST_SERVER_SCRIPT } from '../testing/mcp-test-server';
import { ScriptedChatModel } from '../testing/scripted-chat-model';

function mcpAgent(servers: McpServerConfigInput[]): AgentDefinition {
  return {
    name: 'mcp-user',
    description: 'uses MCP tools',
    mode: 'primary',
    tools: ['read_file'],
    model: null,
    temperature: null,
    systemPrompt: 'You use MCP tools.',
    interruptOn: {},
    mcpServers: servers.map((server) => McpServerConfigSchema.parse(server)),
    skills: null,
    source: 'test',
  };
}

const NOTES: McpServerConfigInput = {
  name: 'notes',
  command: process.execPath,
  args: [MCP_TEST_SERVER_SCRIPT],
  env: { MCP_TEST_GIVEN: 'yes' },
};

function results(events: AgentEventEnvelope[]) {
  return events.flatMap((e) =>
    e.event.type === 'tool_result' ? [{ output: e.event.output, exit: e.event.exit_code }] : [],
  );
}

function systemPromptOf(model: ScriptedChatModel, call: number): string {
  const content = model.calls[call]?.messages[0]?.content;
  return typeof content === 'string' ? content : '';
}

describe('MCP stdio servers (spawned by the session sandbox)', () => {
  let rt: TestRuntime;
  let model: ScriptedChatModel;
  const sandbox = createLocalSandbox({ killGraceMs: 200 });

  async function runtime(servers: McpServerConfigInput[]): Promise<TestRuntime> {
    model = new ScriptedChatModel();
    rt = await createTestRuntime({
      chatModel: model,
      agents: [mcpAgent(servers)],
      extra: { sandbox },
    });
    return rt;
  }
  afterEach(() => rt.cleanup());

  it('offers the server tools namespaced, calls them, and streams results and errors', async () => {
    await runtime([NOTES]);
    model.push(
      {
        toolCalls: [
          { id: 'c1', name: 'mcp__notes__echo', args: { text: 'hi' } },
          { id: 'c2', name: 'mcp__notes__fail', args: {} },
          { id: 'c3', name: 'mcp__notes__picture', args: {} },
          { id: 'c4', name: 'mcp__notes__echo', args: { words: 'hi' } },
          { id: 'c5', name: 'mcp__notes__nope', args: {} },
        ],
      },
      { text: 'done' },
    );
    const session = await rt.createSession('mcp-user');
    const { events, types } = await sendAndCollect(rt, session, 'go');
    expect(types.at(-1)).toBe('done');
    expect(model.calls[0]?.tools).toEqual([
      'read_file',
      'mcp__notes__echo',
      'mcp__notes__fail',
      'mcp__notes__picture',
      'mcp__notes__whereami',
      'mcp__notes__slow',
    ]);
    const calls = events.flatMap((e) => (e.event.type === 'tool_call' ? [e.event.name] : []));
    expect(calls).toEqual([
      'mcp__notes__echo',
      'mcp__notes__fail',
      'mcp__notes__picture',
      'mcp__notes__echo',
      'mcp__notes__nope',
    ]);
    const [echo, fail, picture, invalid, unknown] = results(events);
    expect(echo).toEqual({ output: 'echo: hi', exit: 0 });
    expect(fail).toEqual({ output: 'it failed on purpose', exit: 1 });
    expect(picture).toEqual({ output: 'a red dot\n[image: image/png, 16 bytes]', exit: 0 });
    // Checked against the server's JSON schema before anything is sent to it.
    expect(invalid?.exit).toBe(2);
    expect(invalid?.output).toContain('text: Required');
    expect(invalid?.output).toContain('words: not allowed by the schema');
    expect(unknown?.exit).toBe(127);
    expect(systemPromptOf(model, 0)).toBe('You use MCP tools.');
  });

  it('runs the server in the session workspace with the sandbox environment, kept between turns', async () => {
    await runtime([NOTES]);
    process.env['MCP_TEST_LEAK'] = 'server secret';
    try {
      model.push(
        { toolCalls: [{ id: 'w1', name: 'mcp__notes__whereami', args: {} }] },
        { text: 'one' },
        { toolCalls: [{ id: 'w2', name: 'mcp__notes__whereami', args: {} }] },
        { text: 'two' },
      );
      const session = await rt.createSession('mcp-user');
      const first = await sendAndCollect(rt, session, 'where?');
      const second = await sendAndCollect(rt, session, 'and now?');
      const where = JSON.parse(results(first.events)[0]?.output ?? '{}') as Record<string, unknown>;
      const again = JSON.parse(results(second.events)[0]?.output ?? '{}') as Record<
        string,
        unknown
      >;
      const root = (await sandbox.forSession(session.id, `${rt.workspace}/${session.id}`)).root;
      expect(where).toMatchObject({ cwd: root, home: root, given: 'yes', leaked: null });
      // The second turn used the same process (the pooled connection).
      expect(again['pid']).toBe(where['pid']);
    } finally {
      delete process.env['MCP_TEST_LEAK'];
    }
  });

  it('a server that fails to start opens its breaker; the run goes on without it and the model is told', async () => {
    await runtime([
      NOTES,
      { name: 'broken', command: 'no-such-mcp-server-cognition' },
      { name: 'crashing', command: process.execPath, args: ['-e', 'process.exit(3)'] },
    ]);
    model.push({ text: 'without them' }, { text: 'still without them' });
    const session = await rt.createSession('mcp-user');
    const { types } = await sendAndCollect(rt, session, 'go');
    expect(types.at(-1)).toBe('done');
    expect(model.calls[0]?.tools.filter((t) => !t.startsWith('mcp__notes__'))).toEqual([
      'read_file',
    ]);
    const prompt = systemPromptOf(model, 0);
    expect(prompt).toContain('Some MCP tools are not available in this turn');
    expect(prompt).toContain(
      '- broken: unavailable: could not start: no-such-mcp-server-cognition: command not found',
    );
    expect(prompt).toMatch(/- crashing: unavailable: .*exited with code 3/);
    const breakers = rt.runs.breakerSnapshots().filter((b) => b.name.startsWith('mcp:'));
    expect(breakers.map((b) => [b.name, b.state])).toEqual(
      match.arrayContaining([
        ['mcp:broken', 'OPEN'],
        ['mcp:crashing', 'OPEN'],
        ['mcp:notes', 'CLOSED'],
      ]),
    );
    // While open, the server is not tried again.
    await sendAndCollect(rt, session, 'again');
    expect(systemPromptOf(model, 1)).toMatch(
      /- broken: unavailable: it failed recently and its circuit breaker mcp:broken is open/,
    );
  });

  it('aborting the run stops a running MCP tool call', async () => {
    await runtime([NOTES]);
    model.push({ toolCalls: [{ id: 's1', name: 'mcp__notes__slow', args: { ms: 60_000 } }] });
    const session = await rt.createSession('mcp-user');
    const sent = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'wait',
    });
    const stream = collect(await rt.runs.events(session.id, {}, { runId: sent.run.id }));
    await waitFor(async () =>
      (await rt.log.readAfter(session.id)).events.some((e) => e.event.type === 'tool_call'),
    );
    await rt.runs.abort(session.id, {});
    const events = await stream;
    expect(results(events)).toEqual([{ output: 'Aborted.', exit: 130 }]);
    expect((await rt.storage.runs.get(sent.run.id))?.status).toBe('aborted');
  });
});
