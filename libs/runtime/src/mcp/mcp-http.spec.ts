import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { match } from '../testing/test-runtime';
import { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import type { McpServerConfigInput } from '@cognition/contracts';
import { McpServerConfigSchema } from '@cognition/contracts';
import type { AgentDefinition } from '../agents/agent';
import { silentLogger } from '../logger';
import { toToolDefinition } from '../tools/catalog';
import { FakeExecutionBackend } from '../testing/fake-execution-backend';
import type { HttpMcpTestServer } from '../testing/mcp-test-server';
import { startHttpMcpTestServer } from '../testing/mcp-test-server';
import { McpManager } from './mcp-manager';

function agent(name: string, servers: McpServerConfigInput[]): AgentDefinition {
  return {
    name,
    description: 'd',
    mode: 'primary',
    tools: [],
    model: null,
    temperature: null,
    systemPrompt: 'P',
    interruptOn: {},
    mcpServers: servers.map((server) => McpServerConfigSchema.parse(server)),
    skills: null,
    source: 'test',
  };
}

describe('MCP Streamable HTTP servers', () => {
  let server: HttpMcpTestServer;
  let manager: McpManager;
  let breakers: CircuitBreakerRegistry;
  const backend = new FakeExecutionBackend('/tmp/unused');
  const ctx = { backend: () => Promise.resolve(backend), signal: new AbortController().signal };

  beforeAll(async () => {
    server = await startHttpMcpTestServer();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    breakers = new CircuitBreakerRegistry();
    manager = new McpManager({}, breakers, silentLogger);
  });
  afterEach(() => manager.closeAll());

  it('lists and calls the tools of a loopback server allowed with allow_private', async () => {
    const web = agent('a', [{ name: 'web', url: server.url, allow_private: true }]);
    const run = await manager.forRun('s1', web, ctx);
    expect(run.note).toBe('');
    expect(run.tools.map((t) => t.name)).toEqual([
      'mcp__web__echo',
      'mcp__web__fail',
      'mcp__web__picture',
      'mcp__web__whereami',
      'mcp__web__slow',
    ]);
    const echo = run.tools[0];
    if (!echo) throw new Error('echo is offered');
    // The schema goes to the model exactly as the server published it.
    expect(toToolDefinition(echo).function).toEqual({
      name: 'mcp__web__echo',
      description: 'Echoes the text back',
      parameters: {
        type: 'object',
        properties: { text: { type: 'string', description: 'what to echo' } },
        required: ['text'],
        additionalProperties: false,
      },
    });
    expect(echo.idempotent).toBe(true);
    const signal = new AbortController().signal;
    const call = (index: number, args: unknown) =>
      run.tools[index]?.run(args, { signal } as Parameters<typeof echo.run>[1]);
    expect(await call(0, { text: 'over http' })).toEqual({
      output: 'echo: over http',
      exitCode: 0,
    });
    expect(await call(1, {})).toEqual({ output: 'it failed on purpose', exitCode: 1 });
    run.release();
  });

  it('refuses a loopback server without allow_private (the web_fetch rule), telling the model', async () => {
    const web = agent('a', [{ name: 'web', url: server.url }]);
    const run = await manager.forRun('s1', web, ctx);
    expect(run.tools).toEqual([]);
    expect(run.note).toContain(
      '- web: unavailable: 127.0.0.1 resolves to a non-public address (127.0.0.1); set allow_private: true on the server to allow it',
    );
    expect(breakers.snapshots().find((b) => b.name === 'mcp:web')?.state).toBe('OPEN');
  });

  it('a server that does not answer within timeout_ms is unavailable and opens its breaker', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const mute = agent('a', [
        { name: 'mute', url: `http://127.0.0.1:${port}/mcp`, allow_private: true, timeout_ms: 300 },
      ]);
      const run = await manager.forRun('s1', mute, ctx);
      expect(run.tools).toEqual([]);
      expect(run.note).toMatch(/- mute: unavailable: .*timed out/i);
      expect(breakers.snapshots().find((b) => b.name === 'mcp:mute')?.state).toBe('OPEN');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('offers global servers to every agent or to those listed; an agent server wins a name clash', () => {
    const global = new McpManager(
      {
        servers: [
          {
            server: McpServerConfigSchema.parse({ name: 'all', url: 'https://mcp.example/a' }),
            agents: null,
          },
          {
            server: McpServerConfigSchema.parse({ name: 'some', url: 'https://mcp.example/s' }),
            agents: ['reviewer'],
          },
        ],
      },
      breakers,
      silentLogger,
    );
    const names = (a: AgentDefinition) => global.serversFor(a).map((s) => s.name);
    expect(names(agent('coder', []))).toEqual(['all']);
    expect(names(agent('reviewer', []))).toEqual(['all', 'some']);
    const own = agent('coder', [{ name: 'all', command: 'own-server' }]);
    expect(global.serversFor(own)).toEqual([match.objectContaining({ command: 'own-server' })]);
  });
});
