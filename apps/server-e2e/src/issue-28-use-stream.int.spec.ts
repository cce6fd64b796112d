import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { build } from 'esbuild';
import type { Client } from '@langchain/langgraph-sdk';
import type { Browser, Page } from 'playwright-core';
import { eventually } from './testing/agent-server';
import { launchChromium } from './testing/browser';
import { startLangGraphServer } from './testing/langgraph-sdk';
import { STORY } from './testing/langgraph/story';
import { REPO_ROOT } from './testing/paths';
import type { ServerDatabase } from './testing/postgres';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import { trackOutput } from './testing/process-logs';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 28: a small React page using the SDK's own `useStream` (`@langchain/langgraph-sdk/react`
 * 1.15, bundled for the browser with esbuild here, as a frontend's build would) in a real
 * Chromium, against the built server with the test langgraph.json. The page is served from the
 * server's origin (Playwright answers its one HTML request; every API call reaches the server),
 * so no CORS is involved. `reconnectOnMount` keeps the run id in sessionStorage as the hook
 * does, and the page keeps its thread id in its URL (as Agent Chat UI does), so a reload
 * rejoins. On SQLite and PostgreSQL.
 *
 * The `story` graph streams its answer word by word and stops mid-answer until the test releases
 * its gate; `approval` asks with `interrupt()`. The page's console and the server's logs are
 * printed when a test fails.
 */
const ALICE = 'e2e-use-stream-alice-0123456789';
const BOB = 'e2e-use-stream-bob-0123456789';

/** The page: one `useStream` on the graph named by `?graph=`, its thread in `?thread=`. */
const PAGE_SCRIPT = `
import { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useStream } from '@langchain/langgraph-sdk/react';

const params = new URL(location.href).searchParams;
const graph = params.get('graph');
const gate = params.get('gate');

const text = (content) => (typeof content === 'string' ? content : JSON.stringify(content));

function App() {
  const [threadId, setThreadId] = useState(params.get('thread'));
  const [input, setInput] = useState('');
  const stream = useStream({
    apiUrl: location.origin,
    apiKey: '${ALICE}',
    assistantId: graph,
    threadId,
    onThreadId: (id) => {
      setThreadId(id);
      const url = new URL(location.href);
      url.searchParams.set('thread', id);
      history.replaceState(null, '', url);
    },
    reconnectOnMount: true,
    onError: (error) => console.error('useStream error', String(error)),
  });
  const send = (event) => {
    event.preventDefault();
    if (graph === 'approval') stream.submit({ request: input });
    else
      stream.submit(
        { messages: [{ type: 'human', content: input }] },
        gate ? { config: { configurable: { gate } } } : undefined,
      );
  };
  const question = stream.interrupt?.value?.question;
  return (
    <main>
      <form onSubmit={send}>
        <label>Message <input value={input} onChange={(e) => setInput(e.target.value)} /></label>
        <button>Send</button>
      </form>
      <ul id="messages">
        {stream.messages.map((m, i) => (
          <li key={m.id ?? i} data-type={m.type} data-id={m.id}>{text(m.content)}</li>
        ))}
      </ul>
      {question ? (
        <section id="interrupt">
          <p>{question}</p>
          <button onClick={() => stream.submit(undefined, { command: { resume: 'yes' } })}>Approve</button>
        </section>
      ) : null}
      <p id="answer">{stream.values?.answer ?? ''}</p>
      <p id="status">{stream.isLoading ? 'streaming' : 'idle'}</p>
      <p id="error">{stream.error ? String(stream.error) : ''}</p>
    </main>
  );
}

createRoot(document.getElementById('root')).render(<App />);
`;

async function pageHtml(): Promise<string> {
  const bundle = await build({
    stdin: { contents: PAGE_SCRIPT, resolveDir: REPO_ROOT, loader: 'jsx' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    write: false,
    logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]?.text ?? '';
  return `<!doctype html><html><head><meta charset="utf-8"><title>useStream</title></head>
<body><div id="root"></div>
<script>${script.replaceAll('</script', '<\\/script')}</script></body></html>`;
}

/** A port free now, so a restarted server can listen where the page's streams point. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// One page bundle and one Chromium for both backends: every page opens in a fresh browser
// context (`browser.newPage()`), so the backends' tests share no page state.
let browser: Browser;
let html: string;
beforeAll(async () => {
  [html, browser] = await Promise.all([pageHtml(), launchChromium()]);
}, 90_000);
afterAll(async () => {
  await browser?.close();
});

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-use-stream-')],
  ['PostgreSQL', postgresServerDatabase],
])(
  'useStream of @langchain/langgraph-sdk/react in Chromium on %s (issue 28)',
  (_name, createDatabase) => {
    let database: ServerDatabase;
    const workspace = tempWorkspace('cognition-e2e-use-stream-');
    let port: number;
    let server: ServerProcess;
    let alice: Client;
    /** The console of every page of the spec, printed with the server's logs when a test fails. */
    const consoleLines: string[] = [];
    trackOutput('chromium pages (console)', { stdout: consoleLines, stderr: [] });

    const start = async () => {
      ({ server, alice } = await startLangGraphServer(
        { alice: ALICE, bob: BOB },
        {
          ...database.env,
          COGNITION_WORKSPACE_ROOT: workspace.dir,
          COGNITION_PORT: String(port),
        },
      ));
    };

    beforeAll(async () => {
      database = await createDatabase();
      port = await freePort();
      await start();
    }, 90_000);

    afterAll(async () => {
      await server?.stop('SIGKILL');
      await database?.drop();
      workspace.remove();
    });

    /** A page of the spec, its HTML answered from the server's origin; its requests are counted. */
    const openPage = async (query: string): Promise<{ page: Page; requests: string[] }> => {
      const page = await browser.newPage();
      const requests: string[] = [];
      page.on('console', (message) => consoleLines.push(`[${message.type()}] ${message.text()}`));
      page.on('pageerror', (error) => consoleLines.push(`[pageerror] ${String(error)}`));
      // Each request with its Last-Event-ID (a stream rejoined after an event names it).
      page.on('request', (request) =>
        requests.push(
          `${request.method()} ${request.url()} ${request.headers()['last-event-id'] ?? ''}`.trim(),
        ),
      );
      await page.route(`${server.url}/use-stream.html*`, (route) =>
        route.fulfill({ contentType: 'text/html', body: html }),
      );
      await page.goto(`${server.url}/use-stream.html?${query}`);
      return { page, requests };
    };

    /** The run id `useStream` keeps for the thread in the page's sessionStorage. */
    const storedRun = (page: Page, threadId: string): Promise<unknown> =>
      page.evaluate(`sessionStorage.getItem(${JSON.stringify(`lg:stream:${threadId}`)})`);

    const send = async (page: Page, message: string) => {
      await page.getByLabel('Message').fill(message);
      await page.getByRole('button', { name: 'Send' }).click();
    };

    it('streams tokens into the page; a reload rejoins the same run; after kill -9 and a restart the stream completes', async () => {
      const gate = path.join(workspace.dir, 'story-gate');
      mkdirSync(gate);
      const { page, requests } = await openPage(`graph=story&gate=${encodeURIComponent(gate)}`);
      await send(page, 'tell me a story');

      // The first words are on the page while the run waits at its gate: they came as tokens.
      const firstWords = 'Once upon a time a';
      await page.locator('#messages li[data-type="ai"]', { hasText: firstWords }).waitFor();
      expect(await page.locator('#status').textContent()).toBe('streaming');
      expect(await page.locator('#messages li[data-type="ai"]').textContent()).not.toContain('fox');
      const threadId = new URL(page.url()).searchParams.get('thread') ?? '';
      expect(threadId).not.toBe('');
      const runs = await alice.runs.list(threadId);
      expect(runs).toHaveLength(1);
      const runId = runs[0]?.run_id ?? '';
      expect(await storedRun(page, threadId)).toBe(runId);

      // A reload mid-stream: the hook finds the run id in sessionStorage and joins its stream.
      await page.reload();
      await page
        .locator('#messages li[data-type="human"]', { hasText: 'tell me a story' })
        .waitFor();
      await page.locator('#messages li[data-type="ai"]', { hasText: firstWords }).waitFor();
      await page.locator('#status', { hasText: 'streaming' }).waitFor();
      expect(
        requests.filter((r) => r.startsWith('GET ') && r.includes(`/runs/${runId}/stream`)),
      ).not.toHaveLength(0);
      expect(requests.filter((r) => r.endsWith(`/threads/${threadId}/runs/stream`))).toHaveLength(
        1,
      );
      expect(await alice.runs.list(threadId)).toEqual([
        expect.objectContaining({ run_id: runId, status: 'running' }),
      ]);

      // kill -9 mid-stream and a restart on the same database and port: the run goes on from its
      // checkpoint (the model starts over and stops at the gate again), the page's stream
      // reconnects with Last-Event-ID. The words of the cut-off attempt make way for the new
      // attempt's (the resumed run's first values part has the thread without them): one answer.
      const cutOff = await page.locator('#messages li[data-type="ai"]').getAttribute('data-id');
      await server.stop('SIGKILL');
      await start();
      // The new attempt's message, up to its gate (its words come one part at a time).
      // (A string: this project's TypeScript has no DOM types.)
      await page.waitForFunction(
        `[...document.querySelectorAll('#messages li[data-type="ai"]')].some(
        (ai) => ai.getAttribute('data-id') !== ${JSON.stringify(cutOff)} &&
          ai.textContent === ${JSON.stringify(`${firstWords} `)})`,
        null,
        { timeout: 60_000 },
      );
      expect(await page.locator('#messages li').allTextContents()).toEqual([
        'tell me a story',
        `${firstWords} `,
      ]);
      // Rejoined after the last event the page had (its id: `<run id>:<sequence>`).
      const afterEvent = new RegExp(`/runs/${runId}/stream\\?.* ${runId}:\\d+$`);
      expect(requests.filter((r) => afterEvent.test(r))).not.toHaveLength(0);
      expect(readFileSync(path.join(gate, 'log'), 'utf8')).toBe('words\nwords\n');

      // The gate opened: the page's stream completes with the whole answer.
      writeFileSync(path.join(gate, 'release'), '');
      await page.locator('#status', { hasText: 'idle' }).waitFor({ timeout: 60_000 });
      expect(await page.locator('#error').textContent()).toBe('');
      expect(await page.locator('#messages li').allTextContents()).toEqual([
        'tell me a story',
        STORY,
      ]);
      // One run (the page never started another), ended well.
      expect(requests.filter((r) => r.endsWith(`/threads/${threadId}/runs/stream`))).toHaveLength(
        1,
      );
      await eventually(async () => (await alice.runs.get(threadId, runId)).status === 'success');
      expect(await alice.runs.list(threadId)).toHaveLength(1);
      expect(await storedRun(page, threadId)).toBeNull();
      await page.close();
    });

    it('shows an interrupt() and approves it from the page with command.resume', async () => {
      const { page } = await openPage('graph=approval');
      await send(page, 'deploy');
      await page.locator('#interrupt', { hasText: 'approve deploy?' }).waitFor();
      await page.locator('#status', { hasText: 'idle' }).waitFor();
      const threadId = new URL(page.url()).searchParams.get('thread') ?? '';
      expect((await alice.threads.get(threadId)).status).toBe('interrupted');

      await page.getByRole('button', { name: 'Approve' }).click();
      await page.locator('#answer', { hasText: 'deploy: yes' }).waitFor();
      await page.locator('#status', { hasText: 'idle' }).waitFor();
      expect(await page.locator('#interrupt').count()).toBe(0);
      expect(await page.locator('#error').textContent()).toBe('');
      const runs = await alice.runs.list(threadId);
      expect(runs.map((run) => run.status)).toEqual(['success', 'success']);
      expect((await alice.threads.get(threadId)).status).toBe('idle');
      await page.close();
    });
  },
);
