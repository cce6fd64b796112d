import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ToolContext } from './types';
import { createWebFetchTool, htmlToText } from './web-fetch';
import { match } from '../testing/test-runtime';

function ctx(signal = new AbortController().signal): ToolContext {
  return {
    backend: () => Promise.reject(new Error('unused')),
    signal,
    emit: () => undefined,
    todos: [],
    delegate: () => Promise.reject(new Error('unused')),
  };
}

describe('web_fetch', () => {
  let base: string;
  const server = createServer((req, res) => {
    if (req.url === '/page') {
      res.setHeader('content-type', 'text/html');
      res.end('<html><script>x()</script><p>Hello &amp; welcome</p></html>');
    } else if (req.url === '/big') {
      res.end('x'.repeat(5000));
    } else if (req.url === '/redirect') {
      res.statusCode = 302;
      res.setHeader('location', '/page');
      res.end();
    } else if (req.url === '/slow') {
      setTimeout(() => res.end('late'), 2000).unref();
    } else {
      res.statusCode = 404;
      res.end('nope');
    }
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('fetches text, converting HTML and following redirects', async () => {
    const tool = createWebFetchTool({ allowPrivateNetwork: true });
    const result = await tool.run({ url: `${base}/redirect` }, ctx());
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain(`URL: ${base}/page`);
    expect(result.output).toContain('Hello & welcome');
    expect(result.output).not.toContain('x()');
    expect((await tool.run({ url: `${base}/missing` }, ctx())).exitCode).toBe(1);
  });

  it('refuses non-http schemes and non-public addresses by default', async () => {
    const tool = createWebFetchTool();
    expect(await tool.run({ url: 'file:///etc/passwd' }, ctx())).toMatchObject({
      exitCode: 1,
      output: match.containing('only http and https'),
    });
    expect(await tool.run({ url: `${base}/page` }, ctx())).toMatchObject({
      exitCode: 1,
      output: match.containing('non-public address'),
    });
    expect(await tool.run({ url: 'http://[::ffff:10.0.0.1]/' }, ctx())).toMatchObject({
      output: match.containing('non-public'),
    });
  });

  it('cuts large bodies and times out slow servers', async () => {
    const tool = createWebFetchTool({ allowPrivateNetwork: true, maxBytes: 100, timeoutMs: 200 });
    const big = await tool.run({ url: `${base}/big` }, ctx());
    expect(big.output).toContain('[truncated at 100 bytes]');
    expect(big.output).not.toContain('x'.repeat(101));
    const t0 = Date.now();
    expect(await tool.run({ url: `${base}/slow` }, ctx())).toMatchObject({ exitCode: 124 });
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('stops when the run is aborted', async () => {
    const controller = new AbortController();
    const tool = createWebFetchTool({ allowPrivateNetwork: true });
    setTimeout(() => controller.abort(), 50);
    expect(await tool.run({ url: `${base}/slow` }, ctx(controller.signal))).toMatchObject({
      exitCode: 130,
    });
  });

  it('strips markup to text', () => {
    expect(htmlToText('<h1>T</h1><style>a{}</style><p>a&lt;b</p>')).toBe('T\na<b');
  });
});
