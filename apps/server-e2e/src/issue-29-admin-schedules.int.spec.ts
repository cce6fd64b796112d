import { createCognitionClient } from '@cognition/client';
import type { CognitionClient } from '@cognition/client';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startAgentServer } from './testing/agent-server';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';
import { launchChromium, screenshotsDir } from './testing/browser';

/**
 * The dashboard's Schedules page (issue 29) in a real Chromium against the built server with
 * the fake model, in a viewer's zone that is not the schedule's: the expression in words, the
 * next fire time in the viewer's zone, trigger now (its run shows with its status), disable.
 * The screenshot goes to a temporary folder, or to docs/admin with COGNITION_UPDATE_SCREENSHOTS=1.
 */
const shots = screenshotsDir();
const SHOTS = shots.dir;

let fake: FakeOpenAIServer;
let server: ServerProcess;
let browser: Browser;
let page: Page;
let client: CognitionClient;
const workspace = tempWorkspace();

beforeAll(async () => {
  fake = await FakeOpenAIServer.start({ fallback: { text: 'The daily report.' } });
  server = await startAgentServer(fake, workspace.dir, {});
  client = createCognitionClient({ url: `${server.url}/trpc` });
  browser = await launchChromium();
  // A viewer in New York looking at a schedule read in Berlin.
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    timezoneId: 'America/New_York',
    locale: 'en-US',
  });
  page = await context.newPage();
});

afterAll(async () => {
  await browser?.close();
  if (server) expect(await server.stop()).toBe(0);
  await fake?.close();
  workspace.remove();
  shots.cleanup();
});

test('lists schedules in words with the next time in the viewer’s zone; triggers and disables one', async () => {
  const daily = await client.schedules.create.mutate({
    expression: '30 2 * * *',
    timezone: 'Europe/Berlin',
    target: { kind: 'new_session', agentName: 'default' },
    content: 'Write the daily report',
  });
  const session = await client.sessions.create.mutate({ title: 'Reminders' });
  await client.schedules.create.mutate({
    afterSeconds: 3600,
    target: { kind: 'session', sessionId: session.id },
    content: 'Remind me of the open questions',
  });
  await page.goto(`${server.url}/admin/#/schedules`);
  await page.getByRole('heading', { name: 'Schedules' }).waitFor();
  await page.getByText('At 02:30, every day (Europe/Berlin)').waitFor();
  await page.getByText(/times in your zone \(America\/New_York\)/).waitFor();
  // 02:30 in Berlin is 20:30 the evening before in New York.
  const row = page.getByRole('row').filter({ hasText: 'Write the daily report' });
  await row.getByRole('cell', { name: /08:30\sPM EST$/ }).waitFor();
  await page.getByRole('row').filter({ hasText: 'Remind me of the open questions' }).waitFor();

  await row.getByRole('button', { name: 'Trigger now' }).click();
  await row.getByText('Last runs').click();
  await row.locator('.fires .badge', { hasText: 'completed' }).waitFor({ timeout: 30_000 });
  await row.locator('.fires', { hasText: 'manual' }).waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'schedules.png'), fullPage: true });

  await row.getByRole('button', { name: 'Disable' }).click();
  await row.getByRole('cell', { name: 'disabled' }).waitFor();
  await row.getByRole('button', { name: 'Enable' }).waitFor();
  expect((await client.schedules.get.query({ id: daily.id })).enabled).toBe(false);
});
