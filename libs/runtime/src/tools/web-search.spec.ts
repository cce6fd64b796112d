import { createServer } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentRegistry } from '../agents/registry';
import { ToolCatalog } from './catalog';
import type { ToolContext } from './types';
import { createWebSearchTool } from './web-search';

function ctx(): ToolContext {
  return {
    backend: () => Promise.reject(new Error('unused')),
    signal: new AbortController().signal,
    emit: () => undefined,
    todos: [],
    delegate: () => Promise.reject(new Error('unused')),
  };
}

const HITS = [
  { title: 'Nx', url: 'https://nx.dev', content: 'Smart monorepos' },
  { title: 'Jest', url: 'https://jestjs.io', content: 'Delightful testing' },
  { title: 'No link', content: 'dropped' },
];

/** One local server shaped like SearXNG, Brave and Tavily; it records what it was asked. */
describe('web_search against local provider fakes', () => {
  let base: string;
  const seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] =
    [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.setHeader('content-type', 'application/json');
      if (req.url?.startsWith('/searx/search')) res.end(JSON.stringify({ results: HITS }));
      else if (req.url?.startsWith('/res/v1/web/search'))
        res.end(
          JSON.stringify({
            web: { results: HITS.map((h) => ({ ...h, description: h.content })) },
          }),
        );
      else if (req.url === '/search' && req.method === 'POST')
        res.end(JSON.stringify({ results: HITS }));
      else {
        res.statusCode = 503;
        res.end('down');
      }
    });
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    seen.length = 0;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const expected = [
    { title: 'Nx', url: 'https://nx.dev', snippet: 'Smart monorepos' },
    { title: 'Jest', url: 'https://jestjs.io', snippet: 'Delightful testing' },
  ];

  it('queries SearXNG as /search?q=…&format=json on its (private) base URL', async () => {
    const tool = createWebSearchTool({ provider: 'searxng', url: `${base}/searx/` });
    const result = await tool.run({ query: 'nx & jest' }, ctx());
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.output)).toEqual(expected);
    expect(seen[0]?.url).toBe('/searx/search?q=nx+%26+jest&format=json');
  });

  it('queries Brave with its subscription token and count', async () => {
    const tool = createWebSearchTool({ provider: 'brave', url: base, apiKey: 'bk' });
    const result = await tool.run({ query: 'nx', max_results: 1 }, ctx());
    expect(JSON.parse(result.output)).toEqual(expected.slice(0, 1));
    expect(seen[0]?.url).toBe('/res/v1/web/search?q=nx&count=1');
    expect(seen[0]?.headers['x-subscription-token']).toBe('bk');
  });

  it('queries Tavily with a bearer key and a JSON body', async () => {
    const tool = createWebSearchTool({ provider: 'tavily', url: base, apiKey: 'tk' });
    const result = await tool.run({ query: 'nx' }, ctx());
    expect(JSON.parse(result.output)).toEqual(expected);
    expect(seen[0]?.headers.authorization).toBe('Bearer tk');
    expect(JSON.parse(seen[0]?.body ?? '{}')).toEqual({ query: 'nx', max_results: 5 });
  });

  it('reports a provider error as a failed result, not an exception', async () => {
    const tool = createWebSearchTool({ provider: 'searxng', url: `${base}/down` });
    const result = await tool.run({ query: 'x' }, ctx());
    expect(result.exitCode).toBe(1);
    expect(result.output).toContain('searxng answered 503 down');
  });

  it('is offered only when a provider is configured', () => {
    const agents = new AgentRegistry([]);
    const defaultAgent = agents.get('default');
    if (!defaultAgent) throw new Error('no default agent');
    const names = (catalog: ToolCatalog) => catalog.forAgent(defaultAgent, []).map((t) => t.name);
    expect(names(new ToolCatalog())).not.toContain('web_search');
    expect(names(new ToolCatalog({ webSearch: { provider: 'searxng', url: base } }))).toContain(
      'web_search',
    );
  });
});
