import type { AgentEventEnvelope, McpServerConfigInput } from '@cognition/contracts';
import { McpServerConfigSchema } from '@cognition/contracts';
import { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import { createLocalSandbox } from '@cognition/sandbox-local';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentDefinition } from '../agents/agent';
import { silentLogger } from '../logger';
import type { TestRuntime } from '../testing/test-runtime';
import { createTestRuntime, sendAndCollect, waitFor } from '../testing/test-runtime';
import { MCP_TEST_SERVER_SCRIPT } from '../testing/mcp-test-server';
import { ScriptedChatModel } from '../testing/scripted-chat-model';
import { McpManager } from './mcp-manager';

const NOTES: McpServerConfigInput = {
  name: 'notes',
  command: process.execPath,
  args: [MCP_TEST_SERVER_SCRIPT],
};

function agent(
  name: string,
  mode: AgentDefinition['mode'],
  tools: AgentDefinition['tools'],
  servers: McpServerConfigInput[],
): AgentDefinition {
  return {
    name,
    description: `${name} agent`,
    mode,
    tools,
    model: null,
    temperature: null,
    systemPrompt: `You are ${name}.`,
    interruptOn: {},
    mcpServers: servers.map((server) => McpServerConfigSchema.parse(server)),
    skills: null,
    source: 'test',
  };
}

function firstResult(events: AgentEventEnvelope[]): string {
  for (const e of events) if (e.event.type === 'tool_result') return e.event.output;
  return '';
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('MCP connection lifecycle', () => {
  const sandbox = createLocalSandbox({ killGraceMs: 200 });
  let rt: TestRuntime;
  afterEach(() => rt.cleanup());

  it('a server process that died between turns is started again on the next turn', async () => {
    const model = new ScriptedChatModel();
    rt = await createTestRuntime({
      chatModel: model,
      agents: [agent('user', 'primary', [], [NOTES])],
      extra: { sandbox },
    });
    const session = await rt.createSession('user');
    const where = { toolCalls: [{ name: 'mcp__notes__whereami', args: {} }] };
    model.push(where, { text: 'one' }, where, { text: 'two' });
    const first = JSON.parse(firstResult((await sendAndCollect(rt, session, 'a')).events)) as {
      pid: number;
    };
    process.kill(first.pid, 'SIGKILL');
    await waitFor(() => !alive(first.pid));
    const second = await sendAndCollect(rt, session, 'b');
    const again = JSON.parse(firstResult(second.events)) as { pid: number };
    expect(again.pid).not.toBe(first.pid);
    expect(second.types.at(-1)).toBe('done');
  });

  it('a subagent gets its own MCP servers', async () => {
    const model = new ScriptedChatModel();
    rt = await createTestRuntime({
      chatModel: model,
      agents: [agent('lead', 'primary', ['task'], []), agent('helper', 'subagent', [], [NOTES])],
      extra: { sandbox },
    });
    model.push(
      { toolCalls: [{ name: 'task', args: { agent: 'helper', description: 'echo x' } }] },
      { toolCalls: [{ name: 'mcp__notes__echo', args: { text: 'x' } }] },
      { text: 'the helper echoed x' },
      { text: 'done' },
    );
    const session = await rt.createSession('lead');
    const { events } = await sendAndCollect(rt, session, 'delegate');
    expect(model.calls[0]?.tools).toEqual(['task']);
    expect(model.calls[1]?.tools).toEqual([
      'mcp__notes__echo',
      'mcp__notes__fail',
      'mcp__notes__picture',
      'mcp__notes__whereami',
      'mcp__notes__slow',
    ]);
    const toolMessage = model.calls[2]?.messages.at(-1)?.content;
    expect(toolMessage).toBe('echo: x');
    expect(firstResult(events)).toBe('the helper echoed x');
  });
});

describe('MCP pool idle close', () => {
  it('closes a connection (stops its process) once unused for idleMs', async () => {
    const root = await mkdtemp(join(tmpdir(), 'cognition-mcp-idle-'));
    const sandbox = createLocalSandbox({ killGraceMs: 200 });
    const manager = new McpManager({ idleMs: 50 }, new CircuitBreakerRegistry(), silentLogger);
    try {
      const backend = await sandbox.forSession('idle', root);
      const signal = new AbortController().signal;
      const run = await manager.forRun('idle', agent('user', 'primary', [], [NOTES]), {
        backend: () => Promise.resolve(backend),
        signal,
      });
      const whereami = run.tools.find((t) => t.name === 'mcp__notes__whereami');
      const result = await whereami?.run({}, {
        signal,
      } as Parameters<NonNullable<typeof whereami>['run']>[1]);
      const { pid } = JSON.parse(result?.output ?? '{}') as { pid: number };
      expect(alive(pid)).toBe(true);
      run.release();
      await waitFor(() => !alive(pid));
    } finally {
      await manager.closeAll();
      await sandbox.release('idle');
      await rm(root, { recursive: true, force: true });
    }
  });
});
