import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MCP_TEST_SERVER_SCRIPT, eventsOf, readSse } from '@cognition/runtime/testing';
import {
  FakeOpenAIServer,
  createSession,
  postMessage,
  startAgentServer,
} from './testing/agent-server';
import { http } from './testing/http';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * MCP tools through the BUILT server: an agent file in the workspace names a stdio MCP server
 * (the SDK test server, spawned by the session's local sandbox) and one that cannot start; the
 * fake model calls a namespaced tool and sees the other server reported unavailable.
 */

let fake: FakeOpenAIServer;
let server: ServerProcess;
const workspace = tempWorkspace('cognition-e2e-mcp-');

beforeAll(async () => {
  const agents = path.join(workspace.dir, '.cognition/agents');
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    path.join(agents, 'notes.yaml'),
    [
      'description: Uses the notes MCP server',
      'system_prompt: You keep notes.',
      'tools: [read_file]',
      'mcp_servers:',
      `  - {name: notes, command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(MCP_TEST_SERVER_SCRIPT)}]}`,
      '  - {name: broken, command: no-such-mcp-server-cognition}',
    ].join('\n'),
  );
  fake = await FakeOpenAIServer.start();
  server = await startAgentServer(fake, workspace.dir);
});

afterAll(async () => {
  if (server) expect(await server.stop()).toBe(0);
  await fake.close();
  workspace.remove();
});

describe('an agent with MCP servers (issue 17)', () => {
  it('calls a stdio MCP tool, streams its call and result, and tells the model about the broken server', async () => {
    const sessionId = await createSession(server.url, { agent_name: 'notes' });
    const start = fake.requests.length;
    fake.enqueue(
      { toolCalls: [{ id: 'm1', name: 'mcp__notes__echo', args: { text: 'from e2e' } }] },
      { text: 'noted' },
    );
    const res = await postMessage(server.url, sessionId, { content: 'note this' });
    expect(res.status).toBe(200);
    const events = eventsOf((await readSse(res)).frames);
    expect(events.map((e) => e.event)).toContain('done');
    expect(events.find((e) => e.event === 'tool_call')?.data).toMatchObject({
      id: 'm1',
      name: 'mcp__notes__echo',
      args: { text: 'from e2e' },
    });
    expect(events.find((e) => e.event === 'tool_result')?.data).toMatchObject({
      tool_call_id: 'm1',
      output: 'echo: from e2e',
      exit_code: 0,
    });

    const request = fake.requests[start];
    const tools = request?.body.tools ?? [];
    expect(tools.map((t) => t.function.name)).toEqual([
      'read_file',
      'mcp__notes__echo',
      'mcp__notes__fail',
      'mcp__notes__picture',
      'mcp__notes__whereami',
      'mcp__notes__slow',
    ]);
    expect(tools[1]?.function.parameters).toEqual({
      type: 'object',
      properties: { text: { type: 'string', description: 'what to echo' } },
      required: ['text'],
      additionalProperties: false,
    });
    const system = request?.body.messages?.[0];
    expect(system?.role).toBe('system');
    expect(String(system?.content)).toContain(
      '- broken: unavailable: could not start: no-such-mcp-server-cognition: command not found',
    );

    const health = await http(server.url, 'GET', '/health');
    const breakers = health.json?.['circuit_breakers'] as Record<string, { state: string }>;
    expect(breakers['mcp:notes']?.state).toBe('closed');
    expect(breakers['mcp:broken']?.state).toBe('open');
  });
});
