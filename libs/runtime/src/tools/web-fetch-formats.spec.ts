import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ToolContext } from './types';
import { checkToolArgs } from './types';
import { createWebFetchTool, htmlToMarkdown } from './web-fetch';

const PAGE = `<html><head><style>p{}</style><script>track()</script></head><body>
<h1>Release notes</h1>
<p>Read the <a href="https://example.com/guide">guide</a> &amp; <b>upgrade</b>.</p>
<ul><li>faster</li><li>smaller</li></ul>
<pre><code>npm i cognition</code></pre>
</body></html>`;

function ctx(): ToolContext {
  return {
    backend: () => Promise.reject(new Error('unused')),
    signal: new AbortController().signal,
    emit: () => undefined,
    todos: [],
    delegate: () => Promise.reject(new Error('unused')),
  };
}

describe('web_fetch formats', () => {
  let base: string;
  const server = createServer((req, res) => {
    if (req.url === '/page') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(PAGE);
    } else {
      res.setHeader('content-type', 'application/json');
      res.end('{"a":"<b>kept</b>"}');
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

  const body = (output: string) => output.slice(output.indexOf('\n\n') + 2);
  const tool = createWebFetchTool({ allowPrivateNetwork: true });

  it('returns plain text by default', async () => {
    const result = await tool.run({ url: `${base}/page` }, ctx());
    expect(result.exitCode).toBe(0);
    const text = body(result.output);
    expect(text).toContain('Release notes');
    expect(text).toContain('Read the guide & upgrade.');
    expect(text).not.toMatch(/<|track\(\)|\*\*/);
  });

  it('returns Markdown with headings, links, emphasis, lists and code, without scripts', async () => {
    const result = await tool.run({ url: `${base}/page`, format: 'markdown' }, ctx());
    const markdown = body(result.output);
    expect(markdown).toContain('# Release notes');
    expect(markdown).toContain('[guide](https://example.com/guide)');
    expect(markdown).toContain('**upgrade**');
    expect(markdown).toMatch(/^-\s+faster$/m);
    expect(markdown).toContain('```\nnpm i cognition\n```');
    expect(markdown).not.toContain('track()');
    expect(markdown).not.toContain('p{}');
  });

  it('returns the HTML as served', async () => {
    const result = await tool.run({ url: `${base}/page`, format: 'html' }, ctx());
    expect(body(result.output)).toBe(PAGE);
  });

  it('leaves non-HTML content as it is whatever the format', async () => {
    const result = await tool.run({ url: `${base}/data`, format: 'markdown' }, ctx());
    expect(body(result.output)).toBe('{"a":"<b>kept</b>"}');
  });

  it('refuses an unknown format through its schema', async () => {
    expect(checkToolArgs(tool, { url: base, format: 'pdf' }).ok).toBe(false);
    await expect(htmlToMarkdown('<p>x</p>')).resolves.toBe('x');
  });
});
