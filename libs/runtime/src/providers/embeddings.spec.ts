import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseLlmConfig } from './config';
import { EndpointEmbedder, resolveEmbeddings } from './embeddings';

const llm = parseLlmConfig({
  providers: [
    { id: 'main', kind: 'openai', model: 'gpt-4o-mini', apiKey: 'sk-a', priority: 5 },
    { id: 'local', kind: 'openai_compatible', model: 'm', baseUrl: 'http://127.0.0.1:9/v1/' },
    { id: 'claude', kind: 'anthropic', model: 'c', apiKey: 'k' },
  ],
});

describe('resolveEmbeddings (store.index.embed)', () => {
  it('names a provider by id, else by kind, with its base URL and key', () => {
    expect(resolveEmbeddings('local:nomic', llm)).toMatchObject({
      provider: 'local',
      url: 'http://127.0.0.1:9/v1/embeddings',
      model: 'nomic',
    });
    expect(resolveEmbeddings('openai:text-embedding-3-small', llm)).toMatchObject({
      provider: 'main',
      url: 'https://api.openai.com/v1/embeddings',
      model: 'text-embedding-3-small',
      apiKey: 'sk-a',
    });
  });

  it('falls back to OPENAI_API_KEY for openai, and refuses what cannot embed', () => {
    expect(
      resolveEmbeddings('openai:e', { providers: [] }, { openaiApiKey: 'sk-env' }),
    ).toMatchObject({ provider: 'openai', apiKey: 'sk-env' });
    expect(() => resolveEmbeddings('openai:e', { providers: [] })).toThrow(
      /store\.index\.embed "openai:e": no enabled provider with id or kind "openai"/,
    );
    expect(() => resolveEmbeddings('claude:e', llm)).toThrow(/anthropic, which has no embeddings/);
  });
});

describe('EndpointEmbedder', () => {
  it('posts {model, input} with the key and answers the vectors in input order', async () => {
    const seen: unknown[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({
          auth: req.headers.authorization,
          url: req.url,
          body: JSON.parse(body) as unknown,
        });
        const { input } = JSON.parse(body) as { input: string[] };
        const data = input.map((text, index) => ({ index, embedding: [text.length, 1] }));
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ data: data.reverse() }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const embedder = new EndpointEmbedder({
        provider: 'p',
        url: `http://127.0.0.1:${port}/v1/embeddings`,
        model: 'm',
        apiKey: 'sk',
        timeoutMs: 5000,
        maxRetries: 0,
      });
      expect(await embedder.embedDocuments(['a', 'bbb'])).toEqual([
        [1, 1],
        [3, 1],
      ]);
      expect(await embedder.embedQuery('cc')).toEqual([2, 1]);
      expect(seen[0]).toEqual({
        auth: 'Bearer sk',
        url: '/v1/embeddings',
        body: { model: 'm', input: ['a', 'bbb'] },
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('names the endpoint and the cause when it cannot be reached, after its retries', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const embedder = new EndpointEmbedder({
      provider: 'p',
      url: `http://127.0.0.1:${port}/v1/embeddings`,
      model: 'm',
      timeoutMs: 5000,
      maxRetries: 1,
    });
    await expect(embedder.embedQuery('x')).rejects.toThrow(
      new RegExp(
        `embeddings endpoint http://127.0.0.1:${port}/v1/embeddings \\(provider "p", model "m"\\): unreachable \\(connection refused\\)$`,
      ),
    );
  });
});
