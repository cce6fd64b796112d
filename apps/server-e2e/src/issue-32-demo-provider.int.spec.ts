import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './testing/paths';

/**
 * Issue 32: the demo model (tools/demo/fake-provider.mjs) could not stream slowly or at length,
 * so docs/runs.md's kill-and-resume transcript could not be reproduced with the shipped tools.
 * FAKE_PROVIDER_DELAY_MS, FAKE_PROVIDER_TEXT and FAKE_PROVIDER_TOKENS make it do so.
 */

const SCRIPT = path.join(REPO_ROOT, 'tools/demo/fake-provider.mjs');

async function startDemoModel(
  env: Record<string, string>,
): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [SCRIPT], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const line = out.split('\n').find((l) => l.startsWith('http'));
      if (line) resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`exited ${String(code)}:\n${out}\n${err}`)));
  });
  return { url, child, output: () => `${out}\n${err}` };
}

/** The content chunks of one streamed chat completion. */
async function streamedChunks(url: string, question: string): Promise<string[]> {
  const res = await fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'fake',
      stream: true,
      messages: [{ role: 'user', content: question }],
    }),
  });
  const text = await res.text();
  const chunks: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const parsed = JSON.parse(line.slice(6)) as { choices?: { delta?: { content?: string } }[] };
    const content = parsed.choices?.[0]?.delta?.content;
    if (typeof content === 'string' && content !== '') chunks.push(content);
  }
  return chunks;
}

describe('issue 32: the demo model streams slowly and at length', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill();
  });

  it('answers with FAKE_PROVIDER_TEXT, one word per chunk, repeated to FAKE_PROVIDER_TOKENS words', async () => {
    const demo = await startDemoModel({
      FAKE_PROVIDER_DELAY_MS: '1',
      FAKE_PROVIDER_TEXT: 'Durable runs keep their promise.',
      FAKE_PROVIDER_TOKENS: '12',
    });
    children.push(demo.child);
    const chunks = await streamedChunks(demo.url, 'Tell me about durable runs.');
    expect({ chunks, output: demo.output() }).toMatchObject({
      chunks: [
        'Durable ',
        'runs ',
        'keep ',
        'their ',
        'promise.',
        ' Durable ',
        'runs ',
        'keep ',
        'their ',
        'promise.',
        ' Durable ',
        'runs ',
      ],
    });
  });

  it('keeps its default answer without settings, and refuses a bad one naming it', async () => {
    const demo = await startDemoModel({});
    children.push(demo.child);
    expect((await streamedChunks(demo.url, 'hi')).join('')).toBe('I was shown 1 question(s): hi');
    await expect(startDemoModel({ FAKE_PROVIDER_DELAY_MS: 'slow' })).rejects.toThrow(
      /FAKE_PROVIDER_DELAY_MS: expected a non-negative integer/,
    );
  });
});
