import { createCognitionClient, streamMessage } from '@cognition/client';
import type { CognitionClient } from '@cognition/client';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { seriousAccessibilityViolations } from './testing/accessibility';
import { startAgentServer } from './testing/agent-server';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';
import { chooseOption, launchChromium, screenshotsDir } from './testing/browser';

/**
 * The dashboard (apps/admin) in a real Chromium against the built server with the fake model:
 * sign in, filter sessions, open one, watch a run started by another client stream into the
 * page, abort a run, edit metadata (and meet a version conflict), read the system page.
 * Screenshots of each page go to a temporary folder removed afterwards, so a test run leaves the
 * checkout as it found it; with COGNITION_UPDATE_SCREENSHOTS=1 they replace docs/admin/*.png
 * (committed when they change; apps/admin/README.md).
 */
const API_KEY = 'admin-dashboard-key-0001';
/** May change the registry (agents, providers); the dashboard itself signs in with API_KEY. */
const ADMIN_KEY = 'admin-dashboard-admin-0001';
const shots = screenshotsDir();
const SHOTS = shots.dir;
const LONG_ANSWER = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');

let fake: FakeOpenAIServer;
let server: ServerProcess;
let browser: Browser;
let page: Page;
/** What the browser refused under the page's Content-Security-Policy, over every test. */
const cspViolations: string[] = [];
let client: CognitionClient;
const workspace = tempWorkspace();
const ids: Record<string, string> = {};

beforeAll(async () => {
  fake = await FakeOpenAIServer.start({
    chunkDelayMs: 25,
    fallback: { text: 'The answer, **in markdown**, with `code`.' },
  });
  server = await startAgentServer(fake, workspace.dir, {
    COGNITION_API_KEYS: API_KEY,
    COGNITION_ADMIN_API_KEYS: ADMIN_KEY,
  });
  client = createCognitionClient({ url: `${server.url}/trpc`, apiKey: API_KEY });
  for (const [name, team] of [
    ['Alpha review', 'alpha'],
    ['Alpha triage', 'alpha'],
    ['Beta planning', 'beta'],
  ] as const) {
    const session = await client.sessions.create.mutate({ title: name, metadata: { team } });
    ids[name] = session.id;
  }
  await drain(
    streamMessage(client, { sessionId: ids['Alpha review'] ?? '', content: 'Summarise the PR' }),
  );
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) cspViolations.push(message.text());
  });
});

afterAll(async () => {
  await browser?.close();
  if (server) expect(await server.stop()).toBe(0);
  await fake?.close();
  workspace.remove();
  shots.cleanup();
});

async function drain(events: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of events) {
    // the run's events are not the point here
  }
}

/** Waits until the page's tables hold exactly `count` rows (header rows included). */
async function rowsToBe(count: number): Promise<void> {
  const rows = page.getByRole('row');
  await rows.nth(count - 1).waitFor();
  await rows.nth(count).waitFor({ state: 'detached' });
  expect(await rows.count()).toBe(count);
}

const shot = (name: string) =>
  page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

test('asks for an API key, then lists the sessions', async () => {
  await page.goto(`${server.url}/admin/`);
  await page.getByRole('heading', { name: 'Sign in to Cognition' }).waitFor();
  await page
    .getByRole('alert')
    .filter({ hasText: /API key/i })
    .waitFor();
  await shot('sign-in');
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
  await page.getByLabel('API key').fill(API_KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Sessions' }).waitFor();
  await rowsToBe(4); // header + 3 sessions
  await shot('sessions');
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
});

test('filters sessions by metadata, status and title text, and sorts them', async () => {
  await page.getByLabel('Metadata key').fill('team');
  await page.getByLabel('value').fill('alpha');
  await page.getByRole('link', { name: 'Beta planning' }).waitFor({ state: 'detached' });
  await rowsToBe(3);
  await chooseOption(page.getByLabel('Status'), 'completed');
  await page.getByText('No sessions match.').waitFor();
  await chooseOption(page.getByLabel('Status'), 'any');
  await page.getByLabel('Metadata key').fill('');
  await rowsToBe(4);
  await page.getByLabel('Title contains').fill('TRIAGE');
  await page.getByRole('link', { name: 'Alpha review' }).waitFor({ state: 'detached' });
  await rowsToBe(2);
  await page.getByLabel('Title contains').fill('');
  await chooseOption(page.getByLabel('Sort by'), 'title');
  await chooseOption(page.getByLabel('Order'), 'ascending');
  await page.getByRole('link', { name: 'Beta planning' }).waitFor();
  // The re-sorted page replaces the previous one when its query answers: wait for it (the
  // previous order has Beta planning second).
  await page
    .locator('tbody tr:nth-child(3) td:first-child', { hasText: 'Beta planning' })
    .waitFor();
  const titles = await page.locator('tbody tr td:first-child').allTextContents();
  expect(titles).toEqual(['Alpha review', 'Alpha triage', 'Beta planning']);
});

test('the list follows changes made by other clients, live (sessions.watch)', async () => {
  await page
    .getByRole('status')
    .filter({ hasText: /^Live:/ })
    .waitFor();
  const id = ids['Beta planning'] ?? '';
  await client.sessions.update.mutate({ id, title: 'Beta planning (renamed elsewhere)' });
  await page.getByRole('link', { name: 'Beta planning (renamed elsewhere)' }).waitFor();
  await client.sessions.update.mutate({ id, title: 'Beta planning' });
  await page.getByRole('link', { name: 'Beta planning', exact: true }).waitFor();
});

test('opens a session with the keyboard and shows its conversation and runs', async () => {
  await page.getByRole('link', { name: 'Alpha review' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Alpha review' }).waitFor();
  await page.locator('.messages').getByText('Summarise the PR').waitFor();
  // Markdown is rendered (bold), never injected as HTML.
  await page.locator('.markdown strong', { hasText: 'in markdown' }).waitFor();
  await page.getByRole('cell', { name: 'completed' }).first().waitFor();
});

test('rates an answer with a thumb and a comment', async () => {
  const answer = page.locator('li.message.assistant').first();
  await answer.getByRole('button', { name: 'Good answer' }).click();
  await answer.getByRole('button', { name: 'Good answer', pressed: true }).waitFor();
  await answer.getByText('Add a comment').click();
  await answer.getByLabel('Comment on this answer').fill('Clear and short.');
  await answer.getByRole('button', { name: 'Save comment' }).click();
  await answer.locator('q.comment', { hasText: 'Clear and short.' }).waitFor();
  const { messages } = await client.messages.list.query({ sessionId: ids['Alpha review'] ?? '' });
  expect(messages.find((m) => m.role === 'assistant')?.feedback).toMatchObject({
    score: 5,
    text: 'Clear and short.',
  });
  await shot('session');
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
  // Pressing the chosen thumb again takes the rating back.
  await answer.getByRole('button', { name: 'Good answer', pressed: true }).click();
  await answer.getByRole('button', { name: 'Good answer', pressed: false }).waitFor();
  const after = await client.messages.list.query({ sessionId: ids['Alpha review'] ?? '' });
  expect(after.messages.find((m) => m.role === 'assistant')?.feedback ?? null).toBeNull();
});

test('a message sent by another client streams into the page as it runs', async () => {
  fake.enqueue({ text: LONG_ANSWER, chunkDelayMs: 40 });
  const sending = drain(
    streamMessage(client, { sessionId: ids['Alpha review'] ?? '', content: 'Go long' }),
  );
  const live = page.getByRole('status', { name: 'Answer so far' });
  // Part of the answer is on screen while the run still goes on...
  await page.locator('.stream', { hasText: 'word5' }).waitFor();
  expect(await live.textContent()).not.toContain('word59');
  await shot('session-live');
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
  // ...then all of it, and the run shows completed.
  await sending;
  await page.locator('.messages').getByText('Go long').waitFor();
  await page.locator('.markdown', { hasText: 'word59' }).waitFor();
});

test('aborts a running run from the page', async () => {
  fake.enqueue({ text: LONG_ANSWER, chunkDelayMs: 200 });
  const sending = drain(
    streamMessage(client, { sessionId: ids['Alpha review'] ?? '', content: 'Slow one' }),
  );
  await page.locator('.stream', { hasText: 'word1' }).waitFor();
  await page.getByRole('button', { name: 'Abort run' }).click();
  await sending;
  await page
    .getByRole('cell', { name: /^aborted/ })
    .first()
    .waitFor();
  const runs = await client.runs.list.query({ sessionId: ids['Alpha review'] ?? '' });
  expect(runs.runs.map((r) => r.status).sort()).toEqual(['aborted', 'completed', 'completed']);
});

test('edits metadata with the optimistic version; a concurrent change is a clear conflict', async () => {
  await page.getByRole('button', { name: 'Edit metadata' }).click();
  await page.getByLabel(/per line/).fill('team=alpha\nowner=ops');
  await page.getByRole('button', { name: /^Save \(version/ }).click();
  // The editor closes once the save is acknowledged (its textarea also reads `owner=ops`),
  // then the saved metadata shows.
  await page.getByRole('button', { name: 'Edit metadata' }).waitFor();
  await page.locator('code', { hasText: 'owner=ops' }).waitFor();
  const session = await client.sessions.get.query({ id: ids['Alpha review'] ?? '' });
  expect(session.metadata).toEqual({ team: 'alpha', owner: 'ops' });

  await page.getByRole('button', { name: 'Edit metadata' }).click();
  await client.sessions.update.mutate({ id: session.id, title: 'Renamed elsewhere' });
  await page.getByLabel(/per line/).fill('team=alpha\nowner=me');
  await page.getByRole('button', { name: /^Save \(version/ }).click();
  await page.getByRole('alert').filter({ hasText: 'Someone changed this session' }).waitFor();
  expect((await client.sessions.get.query({ id: session.id })).metadata['owner']).toBe('ops');
});

test('suspends and resumes a session from its page, with the version it shows', async () => {
  const id = ids['Alpha review'] ?? '';
  await page.reload();
  await page.getByRole('heading', { name: 'Lifecycle' }).waitFor();
  await page.getByRole('button', { name: 'Suspend' }).click();
  await page.locator('.badge.suspended').waitFor();
  expect((await client.sessions.get.query({ id })).status).toBe('suspended');
  await shot('session-suspended');
  // Someone else changes the session: the page's version is stale, so acting is a conflict.
  const current = await client.sessions.get.query({ id });
  await client.sessions.update.mutate({
    id,
    title: 'Alpha review',
    expectedVersion: current.version,
  });
  await page.getByRole('button', { name: 'Resume' }).click();
  await page.getByText('Someone changed this session meanwhile').waitFor();
  expect((await client.sessions.get.query({ id })).status).toBe('suspended');
  await page.reload();
  await page.getByRole('button', { name: 'Resume' }).click();
  await page.getByRole('button', { name: 'Suspend' }).waitFor();
  expect((await client.sessions.get.query({ id })).status).toBe('active');
});

test('the analytics page adds up usage and cost by model, saying when prices are unknown', async () => {
  await page.getByRole('link', { name: 'Analytics' }).click();
  await page.getByRole('heading', { name: 'Analytics' }).waitFor();
  // The runs of the tests above: the fake model has no known price, and nothing else was priced.
  const row = page.getByRole('row').filter({ hasText: 'fake-model' });
  await row.waitFor();
  expect(await row.locator('td').nth(5).textContent()).toBe('unknown price');
  const totalCost = page
    .locator('.facts dt', { hasText: 'Cost' })
    .locator('xpath=following-sibling::dd[1]');
  expect(await totalCost.textContent()).toBe('unknown price');
  // Nothing was priced: the chart shows runs, saying so, never a $0 bar.
  // One bar (today's runs), whose tooltip gives the day's figures in the one cost wording.
  const perDay = page.getByRole('figure', { name: 'Runs per day (no priced calls)' });
  const bars = perDay.locator('.recharts-bar-rectangle');
  await bars.first().waitFor();
  expect(await bars.count()).toBe(1);
  await bars.first().hover();
  await perDay.locator('.chart-tooltip', { hasText: 'cost unknown price' }).waitFor();
  await chooseOption(page.getByLabel('Period'), 'last 24 hours');
  await page.getByRole('figure', { name: 'Runs per hour (no priced calls)' }).waitFor();
  await shot('analytics');
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
  // Each session's cost in the list: the same words where runs used only the unpriced model.
  await page.getByRole('link', { name: 'Sessions' }).click();
  await page.getByRole('columnheader', { name: 'Cost' }).waitFor();
  await rowsToBe(4); // header + 3 sessions
  const costs = await page.locator('tbody tr td:nth-child(6)').allTextContents();
  expect(costs).toHaveLength(3);
  expect(costs.some((cost) => cost === 'unknown price')).toBe(true);
  expect(costs.every((cost) => cost === '—' || cost === 'unknown price')).toBe(true);
});

test('the system page shows storage, runs, circuit breakers, agents and providers, the skills and the artifacts with their versions', async () => {
  const admin = createCognitionClient({ url: `${server.url}/trpc`, apiKey: ADMIN_KEY });
  await admin.agents.create.mutate({
    name: 'deployer',
    description: 'Deploys once a person approves.',
    tools: ['read_file', 'execute'],
    interrupt_on: { execute: { allowed: ['approve', 'reject'] } },
    system_prompt: 'You deploy.',
  });
  const report = await client.artifacts.create.mutate({
    name: 'report.md',
    content: '# Findings\nFirst draft.',
    contentType: 'text/markdown',
    visibility: 'public',
  });
  await client.artifacts.update.mutate({ id: report.id, content: '# Findings\nAll green.' });
  await client.artifacts.create.mutate({
    name: 'style.md',
    type: 'policy',
    visibility: 'public',
    content: 'Be brief.',
  });
  // Skills are read from the workspace on every call: added now, listed at once.
  const skill = path.join(workspace.dir, '.cognition', 'skills', 'release-notes');
  mkdirSync(path.join(skill, 'templates'), { recursive: true });
  writeFileSync(
    path.join(skill, 'SKILL.md'),
    '---\nname: release-notes\ndescription: Write the release notes of a version\n---\nSteps.',
  );
  writeFileSync(path.join(skill, 'templates', 'notes.md'), '# v{version}');
  mkdirSync(path.join(workspace.dir, '.cognition', 'skills', 'draft'), { recursive: true });
  writeFileSync(
    path.join(workspace.dir, '.cognition', 'skills', 'draft', 'SKILL.md'),
    'No frontmatter.',
  );
  await page.getByRole('link', { name: 'System' }).click();
  await page.getByRole('heading', { name: 'System' }).waitFor();
  await page.getByText(/sqlite · ok/).waitFor();
  await page.getByRole('heading', { name: 'Circuit breakers' }).waitFor();
  // The agents in force, where each comes from, and what the registry's one asks first.
  await page
    .getByRole('row')
    .filter({ hasText: 'readonly' })
    .filter({ hasText: 'builtin' })
    .waitFor();
  await page
    .getByRole('row')
    .filter({ hasText: 'deployer' })
    .filter({ hasText: 'api v1' })
    .filter({ hasText: 'execute (approve/reject)' })
    .waitFor();
  // The test server's provider is defined by COGNITION_LLM_PROVIDER: its origin says so.
  await page
    .getByRole('row')
    .filter({ hasText: 'openai_compatible' })
    .filter({ hasText: 'environment' })
    .waitFor();
  await page.getByRole('row').filter({ hasText: 'Write the release notes of a version' }).waitFor();
  await page.getByText('templates/notes.md').waitFor();
  await page.getByText(/expected YAML frontmatter/).waitFor();
  await page.getByRole('heading', { name: 'Artifacts' }).waitFor();
  await chooseOption(page.getByLabel('Type'), 'policy');
  await page.getByRole('button', { name: 'report.md' }).waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'style.md' }).waitFor();
  await chooseOption(page.getByLabel('Type'), 'any');
  await page.getByRole('button', { name: 'report.md' }).click();
  // The newest version opens first; an older one is a click away.
  await page.getByLabel('Content of version 2').filter({ hasText: 'All green.' }).waitFor();
  await page.getByRole('button', { name: 'v1', exact: true }).click();
  await page.getByLabel('Content of version 1').filter({ hasText: 'First draft.' }).waitFor();
  await shot('system');
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
});

test('works on a narrow window', async () => {
  await page.setViewportSize({ width: 390, height: 800 });
  await page.getByRole('link', { name: 'Sessions' }).click();
  await page.getByRole('link', { name: 'Alpha triage' }).waitFor();
  // The page itself never scrolls sideways; a wide table scrolls inside its own box.
  // (The function runs in the page: its globals are the browser's, unknown to this file's types.)
  const overflow = await page.evaluate<number>(
    'document.documentElement.scrollWidth - window.innerWidth',
  );
  expect(overflow).toBeLessThanOrEqual(0);
  await shot('sessions-narrow');
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
  // The pages with the widest tables too: a table wider than the window scrolls in its own box,
  // which the keyboard can reach (axe: scrollable-region-focusable).
  await page.getByRole('link', { name: 'Analytics' }).click();
  await page.getByRole('row').filter({ hasText: 'fake-model' }).waitFor();
  await page.getByRole('figure').waitFor();
  expect(
    await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
  ).toBeLessThanOrEqual(0);
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
  await page.getByRole('link', { name: 'System' }).click();
  await page.getByRole('row').filter({ hasText: 'Write the release notes of a version' }).waitFor();
  await page.getByRole('button', { name: 'report.md' }).waitFor();
  expect(
    await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
  ).toBeLessThanOrEqual(0);
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
});

test('rewinds a conversation from its history, with the version it shows, and forks it', async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const session = await client.sessions.create.mutate({ title: 'History demo' });
  fake.enqueue({ text: 'First answer.' }, { text: 'Second answer.' });
  await drain(streamMessage(client, { sessionId: session.id, content: 'First question' }));
  await drain(streamMessage(client, { sessionId: session.id, content: 'Second question' }));
  await page.goto(`${server.url}/admin/#/sessions/${session.id}`);
  await page.getByRole('heading', { name: 'History', exact: true }).waitFor();
  await page.getByText('Second answer.').first().waitFor();
  // Back to the end of the first turn: the second leaves the conversation.
  const firstTurnEnd = page.getByRole('row').filter({ hasText: 'First answer.' }).first();
  await firstTurnEnd.getByRole('button', { name: /^Rewind to step/ }).click();
  await page.getByText('Rewound: the conversation now holds 2 messages.').waitFor();
  await page.locator('.markdown', { hasText: 'Second question' }).waitFor({ state: 'detached' });
  expect((await client.sessions.get.query({ id: session.id })).messageCount).toBe(2);
  await shot('session-history');
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
  // Someone else changes the session: a rewind with the version the page shows is refused.
  await client.sessions.update.mutate({ id: session.id, title: 'History demo (renamed)' });
  const question = page.getByRole('row').filter({ hasText: 'First question' }).first();
  await question.getByRole('button', { name: /^Rewind to step/ }).click();
  await page
    .getByRole('alert')
    .filter({ hasText: 'Someone changed this session meanwhile' })
    .waitFor();
  expect((await client.sessions.get.query({ id: session.id })).messageCount).toBe(2);
  // A fork from the first question opens the new session, holding that much of the thread.
  await question.getByRole('button', { name: /^Fork from step/ }).click();
  await page.getByRole('heading', { name: /\(fork at step -?\d+\)$/ }).waitFor();
  await page.locator('.messages').getByText('First question').waitFor();
  const forkId = decodeURIComponent(page.url().split('/sessions/')[1] ?? '');
  const fork = await client.sessions.get.query({ id: forkId });
  expect(fork.parentId).toBe(session.id);
  expect(fork.messageCount).toBe(1);
});

test('broke no rule of its Content-Security-Policy on any page above (selects, dialogs, charts)', () => {
  // Radix's scroll lock takes the page load's nonce; its selects' and scroll areas' fixed styles
  // are allowed by hash (apps/server/src/http/admin.ts). A refused style or script is a console
  // error naming the hash it would need.
  expect(cspViolations).toEqual([]);
});
