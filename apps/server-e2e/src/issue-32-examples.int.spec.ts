import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import { FAKE_MODEL, FakeOpenAIServer, eventually, startAgentServer } from './testing/agent-server';
import { succeed } from './testing/exec';
import { http } from './testing/http';
import { REPO_ROOT } from './testing/paths';
import { trackOutput } from './testing/process-logs';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';
import { launchChromium } from './testing/browser';

/**
 * Issue 32: the client installs from the tarball `npm run build` writes, and the projects of
 * examples/ work as a user runs them. The spec packs the client (libs/client/pack.mjs) into a
 * temp copy of the repository's layout (dist/packages next to examples/, so the examples'
 * `file:../../dist/packages/…` dependencies resolve unchanged), installs each example there from
 * the registry (npm's cache first), then, against the built server with the fake model and API
 * keys: runs the Node script, and builds the React page, serves the build with `vite preview`
 * (whose proxy adds the API key) and sends one message in Chromium.
 */

const API_KEY = 'examples-key-0001';
const EXAMPLES = ['node-turn', 'react-chat'] as const;

/** The child processes' environment: jest's NODE_ENV=test would make Vite bundle React for tests. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_ENV: _jest, ...env } = process.env;
  return { ...env, ...extra };
}

/** The fake model echoes the last user message, so an answer names its question. */
function echo(request: RecordedRequest): { text: string } {
  const users = (request.body.messages ?? []).filter((message) => message.role === 'user');
  const last = users.at(-1)?.content;
  return { text: `You said: ${typeof last === 'string' ? last : JSON.stringify(last)}` };
}

let workDir: string;
let tarball: string;
let fake: FakeOpenAIServer;
let server: ServerProcess;
const workspace = tempWorkspace();
let preview: ChildProcess | undefined;
let browser: Browser | undefined;

const exampleDir = (name: (typeof EXAMPLES)[number]) => path.join(workDir, 'examples', name);

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'cognition-examples-'));
  const packed = await succeed(
    process.execPath,
    [
      path.join(REPO_ROOT, 'libs/client/pack.mjs'),
      '--out-dir',
      path.join(workDir, 'dist/packages'),
    ],
    REPO_ROOT,
  );
  tarball = path.join(workDir, /-> (\S+\.tgz)$/m.exec(packed.stdout)?.[1] ?? '');
  for (const name of EXAMPLES) {
    // What a user's checkout may hold besides the sources (an earlier install or build) stays.
    await cp(path.join(REPO_ROOT, 'examples', name), exampleDir(name), {
      recursive: true,
      filter: (source) => !/(^|\/)(node_modules|dist|package-lock\.json)$/.test(source),
    });
  }
  // Both installs at once: they share npm's cache and are mostly waiting on it.
  await Promise.all(
    EXAMPLES.map((name) =>
      succeed(
        'npm',
        ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
        exampleDir(name),
        childEnv(),
      ),
    ),
  );
  fake = await FakeOpenAIServer.start({ chunkDelayMs: 5, fallback: echo });
  server = await startAgentServer(fake, workspace.dir, { COGNITION_API_KEYS: API_KEY });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  if (preview && preview.exitCode === null && preview.signalCode === null) {
    const exited = new Promise((resolve) => preview?.once('exit', resolve));
    preview.kill('SIGTERM');
    await exited;
  }
  if (server) expect(await server.stop()).toBe(0);
  await fake?.close();
  workspace.remove();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** The sessions the server holds, with their messages (REST, as the API key's caller). */
async function storedConversations(): Promise<{ title: string; messages: string[] }[]> {
  const headers = { Authorization: `Bearer ${API_KEY}` };
  const list = await http(server.url, 'GET', '/sessions?limit=50', { headers });
  const sessions = (list.json?.['sessions'] ?? []) as { id: string; title: string }[];
  return Promise.all(
    sessions.map(async ({ id, title }) => {
      const page = await http(server.url, 'GET', `/sessions/${id}/messages?order=asc`, { headers });
      const messages = (page.json?.['messages'] ?? []) as { role: string; content: string }[];
      return { title, messages: messages.map(({ role, content }) => `${role}: ${content}`) };
    }),
  );
}

test('the examples depend on the tarball npm run build writes, by its versioned name', async () => {
  expect(path.basename(tarball)).toMatch(/^cognition-client-\d+\.\d+\.\d+.*\.tgz$/);
  const serverPackage = JSON.parse(
    await readFile(path.join(REPO_ROOT, 'apps/server/package.json'), 'utf8'),
  ) as { version: string };
  expect(path.basename(tarball)).toBe(`cognition-client-${serverPackage.version}.tgz`);
  for (const name of EXAMPLES) {
    const manifest = JSON.parse(
      await readFile(path.join(REPO_ROOT, 'examples', name, 'package.json'), 'utf8'),
    ) as { dependencies: Record<string, string> };
    expect(manifest.dependencies['@cognition/client']).toBe(
      `file:../../dist/packages/${path.basename(tarball)}`,
    );
  }
});

test('node-turn: creates a session, streams a turn and prints it', async () => {
  const ran = await succeed(
    process.execPath,
    ['turn.mjs', 'Hello from Node'],
    exampleDir('node-turn'),
    childEnv({ COGNITION_URL: server.url, COGNITION_API_KEY: API_KEY }),
  );
  const lines = ran.stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^session [0-9a-f-]{36}$/);
  expect(lines.slice(1)).toEqual([
    '> Hello from Node',
    'You said: Hello from Node',
    expect.stringMatching(new RegExp(`^done \\(${FAKE_MODEL}: \\d+ tokens in, \\d+ out\\)$`)),
  ]);
  expect(await storedConversations()).toContainEqual({
    title: 'node-turn example',
    messages: ['user: Hello from Node', 'assistant: You said: Hello from Node'],
  });
});

test('react-chat: builds, and its page streams the answer to a message in Chromium', async () => {
  const dir = exampleDir('react-chat');
  // tsc --noEmit, then vite build: the page's TypeScript checks against the tarball's types.
  await succeed('npm', ['run', 'build', '--silent'], dir, childEnv());

  const stdout: string[] = [];
  const stderr: string[] = [];
  preview = spawn(
    process.execPath,
    [path.join(dir, 'node_modules/vite/bin/vite.js'), 'preview', '--port', '0'],
    {
      cwd: dir,
      // NO_COLOR: plain output, so the URL it prints can be read.
      env: childEnv({ COGNITION_URL: server.url, COGNITION_API_KEY: API_KEY, NO_COLOR: '1' }),
    },
  );
  trackOutput('vite preview (react-chat)', { stdout, stderr }, preview);
  let printed = ''; // whole, for the URL: a chunk may end inside a line
  preview.stdout?.on('data', (chunk: Buffer) => {
    printed += String(chunk);
    stdout.push(...String(chunk).split('\n'));
  });
  preview.stderr?.on('data', (chunk: Buffer) => stderr.push(String(chunk)));
  const pageUrl = await eventually(() => {
    if (preview?.exitCode !== null) throw new Error('vite preview exited');
    return Promise.resolve(/Local:\s+(http:\/\/\S+)\n/.exec(printed)?.[1]);
  }, 60_000);

  browser = await launchChromium();
  const page = await browser.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(pageUrl);
  await page.getByRole('heading', { name: 'Cognition chat' }).waitFor();
  await page.getByLabel('Message').fill('Hello from the browser');
  await page.getByRole('button', { name: 'Send' }).click();

  const answer = page.locator('.conversation li.assistant[data-state="done"] .text');
  await answer.waitFor();
  // The page writes only token events into the answer: this text is the streamed one.
  expect(await answer.textContent()).toBe('You said: Hello from the browser');
  expect(await page.locator('.conversation li.user').allTextContents()).toEqual([
    'Hello from the browser',
  ]);
  await page.getByRole('button', { name: 'Send' }).waitFor();
  expect(await page.getByRole('alert').count()).toBe(0);
  expect(pageErrors).toEqual([]);
  expect(await storedConversations()).toContainEqual({
    title: 'React chat example',
    messages: ['user: Hello from the browser', 'assistant: You said: Hello from the browser'],
  });
}, 180_000); // a type check, a Vite build and a browser: a minute or more on a loaded machine
