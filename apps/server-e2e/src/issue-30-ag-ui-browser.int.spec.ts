import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { FakeOpenAIServer, startAgentServer } from './testing/agent-server';
import { launchChromium } from './testing/browser';
import { REPO_ROOT } from './testing/paths';
import type { ServerDatabase } from './testing/postgres';
import { sqliteServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 30: a small chat page in real Chromium that talks to an agent through the published
 * `@ag-ui/client` `HttpAgent` (bundled for the browser with esbuild, as a frontend would), on
 * the built server: it shows an answer as it streams in (the model stalls mid-answer, so the
 * part shown is checked while the run still streams), then runs a turn and shows its answer.
 */

const KEY = 'agui-page-key-0123456789';
const ANSWER = 'Streamed into the page word by word';

/** The page's script: a form whose submit runs one AG-UI turn and shows the text as it comes. */
const PAGE_SCRIPT = `
import { HttpAgent } from '@ag-ui/client';

const agent = new HttpAgent({
  url: '/ag-ui/default',
  headers: { Authorization: 'Bearer ${KEY}' },
});
const form = document.querySelector('form');
const answer = document.querySelector('#answer');
const status = document.querySelector('#status');
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = form.querySelector('input');
  agent.addMessage({ id: crypto.randomUUID(), role: 'user', content: input.value });
  answer.textContent = '';
  status.textContent = 'streaming';
  let chunks = 0;
  let runError = null;
  try {
    await agent.runAgent({}, {
      onTextMessageContentEvent: ({ event }) => {
        chunks += 1;
        answer.textContent += event.delta;
        answer.dataset.chunks = String(chunks);
      },
      onRunErrorEvent: ({ event }) => {
        runError = event.message;
      },
    });
    status.textContent = runError === null ? 'finished' : 'failed: ' + runError;
  } catch (error) {
    status.textContent = 'failed: ' + String(error);
  }
});
`;

async function pageHtml(): Promise<string> {
  const bundle = await build({
    stdin: { contents: PAGE_SCRIPT, resolveDir: REPO_ROOT, loader: 'js' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]?.text ?? '';
  return `<!doctype html><html><head><meta charset="utf-8"><title>AG-UI chat</title></head>
<body><form><label>Message <input name="message"></label><button>Send</button></form>
<p id="answer"></p><p id="status">idle</p>
<script>${script.replaceAll('</script', '<\\/script')}</script></body></html>`;
}

describe('AG-UI in Chromium through @ag-ui/client', () => {
  let fake: FakeOpenAIServer;
  const workspace = tempWorkspace('cognition-agui-page-');
  let db: ServerDatabase;
  let server: ServerProcess;
  let browser: Browser;
  let html: string;

  beforeAll(async () => {
    fake = await FakeOpenAIServer.start({ fallback: { text: ANSWER } });
    db = await sqliteServerDatabase('cognition-agui-page-');
    [server, html] = await Promise.all([
      startAgentServer(fake, workspace.dir, { ...db.env, COGNITION_API_KEYS: KEY }),
      pageHtml(),
    ]);
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop('SIGKILL');
    await fake?.close();
    await db?.drop();
    workspace.remove();
  });

  it('runs a turn and shows the streamed answer', async () => {
    const page = await browser.newPage();
    // The page is served from the server's origin (no CORS): the request never leaves Chromium.
    await page.route(`${server.url}/chat.html`, (route) =>
      route.fulfill({ contentType: 'text/html', body: html }),
    );
    await page.goto(`${server.url}/chat.html`);
    // The first answer stalls after three words: they are on the page while the run streams.
    fake.enqueue({ text: 'Partly streamed and then stuck', hangAfterChunks: 3 });
    await page.getByLabel('Message').fill('hello from the browser');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#answer', { hasText: 'Partly streamed and' }).waitFor();
    expect(await page.locator('#status').textContent()).toBe('streaming');
    // Ended from outside (REST abort): the page's run ends with the error.
    const sessions = (await (
      await fetch(`${server.url}/sessions`, { headers: { Authorization: `Bearer ${KEY}` } })
    ).json()) as { sessions: { id: string }[] };
    const abort = await fetch(`${server.url}/sessions/${sessions.sessions[0]?.id}/abort`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}` },
    });
    expect(abort.status).toBe(200);
    await page.locator('#status', { hasText: 'failed' }).waitFor({ timeout: 30_000 });

    // The next turn on the same thread streams its whole answer.
    await page.getByLabel('Message').fill('and now?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#status', { hasText: 'finished' }).waitFor({ timeout: 30_000 });
    expect(await page.locator('#answer').textContent()).toBe(ANSWER);
    expect(Number(await page.locator('#answer').getAttribute('data-chunks'))).toBeGreaterThan(0);
    await page.close();
  });
});
