import { createCognitionClient } from '@cognition/client';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { seriousAccessibilityViolations } from './testing/accessibility';
import { startAgentServer } from './testing/agent-server';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';
import { chooseOption, launchChromium, screenshotsDir } from './testing/browser';

/**
 * The dashboard's Playground (issue 32) in a real Chromium against the built server with the
 * fake model: pick an agent file that asks before `execute`, chat with it, approve, edit (a bad
 * JSON shown on the field first) and reject its commands from the page, abort a paused run; each
 * turn's tool call folds its arguments and result and its run timeline lists the model calls,
 * the sandbox exec and the wait for the decision. Then the session page's full, copyable run
 * ids and a past run's timeline (from the stored events' times), and the page on a narrow window;
 * last, the System page's forms: an agent added, then edited, and a provider added and edited,
 * each refused field's message next to it, and both deleted again from their tables after a
 * confirmation (a version changed meanwhile refused in the dialog). The cases run in order on one page and one server. One server for the file; the screenshot goes to a
 * temporary folder, or to docs/admin with COGNITION_UPDATE_SCREENSHOTS=1.
 */
const shots = screenshotsDir();
const SHOTS = shots.dir;

const CAREFUL_AGENT = `---
description: Runs commands only once a person decides.
tools: [execute]
interrupt_on:
  execute: true
---

You run shell commands for the user, one at a time.
`;

/** "run <words>" asks for `echo <words>`; a tool result is quoted back. */
function reply(request: RecordedRequest) {
  const last = (request.body.messages ?? []).at(-1);
  if (last?.role === 'tool') return { text: `The tool said: ${String(last.content).trim()}` };
  const words = typeof last?.content === 'string' ? last.content.replace(/^run /, '') : '';
  return { toolCalls: [{ name: 'execute', args: { command: `echo ${words}` } }] };
}

let fake: FakeOpenAIServer;
let server: ServerProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const workspace = tempWorkspace('cognition-playground-');

beforeAll(async () => {
  mkdirSync(path.join(workspace.dir, '.cognition', 'agents'), { recursive: true });
  writeFileSync(path.join(workspace.dir, '.cognition', 'agents', 'careful.md'), CAREFUL_AGENT);
  fake = await FakeOpenAIServer.start({ fallback: reply });
  server = await startAgentServer(fake, workspace.dir, {});
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  page = await context.newPage();
});

afterAll(async () => {
  await browser?.close();
  if (server) expect(await server.stop()).toBe(0);
  await fake?.close();
  workspace.remove();
  shots.cleanup();
});

const turn = (n: number) => page.getByRole('list', { name: 'Conversation' }).locator('> li').nth(n);

/** The labels of a turn's run timeline, in order. */
const spansOf = (n: number) =>
  turn(n).getByRole('list', { name: 'Run timeline' }).locator('.span-label').allTextContents();

/** Sends a message and waits for its run to pause before the command. */
async function sendAndPause(n: number, content: string): Promise<void> {
  await page.getByLabel('Message').fill(content);
  await page.getByRole('button', { name: 'Send' }).click();
  await turn(n).getByText('The agent wants to run').waitFor();
  await turn(n).locator('.badge', { hasText: 'waiting for a decision' }).waitFor();
}

test('chats with an agent file, approving, editing and rejecting its commands, and aborts a paused run', async () => {
  await page.goto(`${server.url}/admin/#/playground`);
  await page.getByRole('heading', { name: 'Playground' }).waitFor();
  await chooseOption(page.getByLabel('Agent'), 'careful (file)');
  expect(await page.getByLabel('Agent').textContent()).toBe('careful (file)');

  // Approve: the command runs as the model wrote it.
  await sendAndPause(0, 'run approved');
  await turn(0).getByRole('button', { name: 'Send decision' }).click();
  await turn(0).getByText('The tool said: approved').waitFor();
  await turn(0).locator('.badge', { hasText: 'completed' }).waitFor();
  await turn(0).getByText('Tool execute · ok').click();
  await turn(0).getByText('"command": "echo approved"').waitFor();
  expect(await spansOf(0)).toEqual([
    'model call 1',
    'waiting for a decision',
    'sandbox exec (execute)',
    'model call 2',
  ]);

  // Edit: a bad JSON is refused on the field, then the edited command runs.
  await sendAndPause(1, 'run original');
  await turn(1).getByRole('radio', { name: 'Edit' }).check();
  const args = turn(1).getByLabel('Arguments (JSON)');
  await args.fill('{"command": ');
  await turn(1).getByRole('button', { name: 'Send decision' }).click();
  await turn(1).getByRole('alert').filter({ hasText: 'Arguments not JSON' }).waitFor();
  expect(await args.getAttribute('aria-invalid')).toBe('true');
  await args.fill('{"command": "echo edited"}');
  await turn(1).getByRole('button', { name: 'Send decision' }).click();
  await turn(1).getByText('The tool said: edited').waitFor();
  // The edited call is one call, shown with the arguments it ran with.
  expect(await turn(1).locator('.tool-call').count()).toBe(1);
  await turn(1).getByText('Tool execute · ok').click();
  await turn(1).getByText('"command": "echo edited"').waitFor();

  // Reject: the command never runs; the model reads the message instead.
  await sendAndPause(2, 'run never');
  await turn(2).getByRole('radio', { name: 'Reject' }).check();
  await turn(2).getByLabel('Message to the model (optional)').fill('not today');
  await turn(2).getByRole('button', { name: 'Send decision' }).click();
  await turn(2).locator('.badge', { hasText: 'completed' }).waitFor();
  expect(await turn(2).getByText('The tool said: edited').count()).toBe(0);
  expect(await turn(2).textContent()).not.toContain('echo never\n');

  // Abort while it waits for a decision.
  await sendAndPause(3, 'run aborted');
  await turn(3).getByRole('button', { name: 'Abort run' }).click();
  await turn(3).locator('.badge', { hasText: 'aborted' }).waitFor();
  await turn(3).getByText('Tool execute · not run', { exact: true }).waitFor();
  expect(await spansOf(3)).toEqual(['model call 1', 'waiting for a decision']);
  await page.getByRole('button', { name: 'Send' }).waitFor({ state: 'visible' });
  expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(false);
  await page.screenshot({ path: path.join(SHOTS, 'playground.png'), fullPage: true });
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
});

test('the session page shows full run ids that copy, and the playground fits a narrow window', async () => {
  await page.getByRole('link', { name: 'Open the session' }).click();
  await page.getByRole('heading', { name: 'Playground: careful' }).waitFor();
  const copy = page.getByRole('button', { name: /^Copy run id / }).first();
  const label = (await copy.getAttribute('aria-label')) ?? '';
  const runId = label.replace('Copy run id ', '');
  expect(runId.length).toBeGreaterThan(20);
  await page.getByRole('cell', { name: new RegExp(runId) }).waitFor();
  await copy.click();
  // The outcome is the status beside the button.
  await page.locator('.copy-id', { has: copy }).getByRole('status').getByText('Copied').waitFor();
  expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(runId);
  // A past run's timeline, from its stored events and the times they were emitted: the first
  // turn (approved) reads as it did live.
  const first = page.locator('.run-timelines > li').last();
  await first.locator('summary').first().click();
  const timeline = first.getByRole('list', { name: 'Run timeline' });
  await timeline.waitFor();
  expect(await timeline.locator('.span-label').allTextContents()).toEqual([
    'model call 1',
    'waiting for a decision',
    'sandbox exec (execute)',
    'model call 2',
  ]);
  expect(await seriousAccessibilityViolations(page)).toEqual([]);

  await page.setViewportSize({ width: 390, height: 800 });
  await page.goto(`${server.url}/admin/#/playground`);
  await chooseOption(page.getByLabel('Agent'), 'careful (file)');
  await sendAndPause(0, 'run narrow');
  // The page never scrolls sideways; the elements that stick out, if any, are named (the
  // function runs in the page, with the browser's globals).
  const wider = await page.evaluate<string[]>(
    `[...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
      .map((e) => e.tagName.toLowerCase() + '.' + e.className)`,
  );
  expect(wider).toEqual([]);
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
  await turn(0).getByRole('button', { name: 'Abort run' }).click();
  await turn(0).locator('.badge', { hasText: 'aborted' }).waitFor();
});

test('adds an agent on the System page, a refused field shown next to it, then picks it in the playground', async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${server.url}/admin/#/system`);
  await page.getByText('Add or edit an agent (admin key)').click();
  const form = page.getByRole('form', { name: 'Add an agent' });
  await form.getByLabel('Name', { exact: true }).fill('lister');
  await form.getByLabel('Description').fill('Lists files.');
  await form.getByLabel('Tools (comma-separated)').fill('ls, exec');
  await form.getByLabel('System prompt').fill('You list files.');
  await form.getByRole('button', { name: 'Add agent' }).click();
  const tools = form.getByLabel('Tools (comma-separated)');
  // The server's message for `tools.1`, next to the field it belongs to.
  await form.locator('#agent-tools-problem', { hasText: 'expected one of "ls"' }).waitFor();
  await form.getByRole('alert').filter({ hasText: 'see the messages next to them' }).waitFor();
  expect(await tools.getAttribute('aria-invalid')).toBe('true');
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
  await tools.fill('ls');
  await form.getByRole('button', { name: 'Add agent' }).click();
  await form.getByRole('status').filter({ hasText: 'Added lister (version 1)' }).waitFor();
  await page.getByRole('row').filter({ hasText: 'lister' }).filter({ hasText: 'api v1' }).waitFor();

  // A registry agent is one of the playground's choices.
  await page.getByRole('link', { name: 'Playground' }).click();
  await chooseOption(page.getByLabel('Agent'), 'lister (api v1)');
  expect(await page.getByLabel('Agent').textContent()).toBe('lister (api v1)');
});

test('edits a registry agent, and adds and edits a provider, refused fields shown next to them', async () => {
  await page.goto(`${server.url}/admin/#/system`);
  await page.getByText('Add or edit an agent (admin key)').click();
  await chooseOption(page.getByLabel('Agent', { exact: true }), 'lister (api v1)');
  const agent = page.getByRole('form', { name: 'Edit agent lister' });
  expect(await agent.getByLabel('Description').inputValue()).toBe('Lists files.');
  const tools = agent.getByLabel('Tools (comma-separated)');
  await tools.fill('ls, exec');
  await agent.getByRole('button', { name: 'Save agent' }).click();
  await agent.locator('#agent-tools-problem', { hasText: 'expected one of "ls"' }).waitFor();
  await tools.fill('ls, read_file');
  await agent.getByLabel('Description').fill('Lists and reads files.');
  await agent.getByRole('button', { name: 'Save agent' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved lister (version 2)' }).waitFor();
  await page.getByRole('row').filter({ hasText: 'lister' }).filter({ hasText: 'api v2' }).waitFor();

  await page.getByText('Add or edit a provider (admin key)').click();
  const provider = page.getByRole('form', { name: 'Add a provider' });
  await provider.getByLabel('Id').fill('local-llm');
  await chooseOption(provider.getByLabel('Kind'), 'openai_compatible');
  await provider.getByLabel('Default model').fill('small');
  await provider.getByLabel('Priority (lower wins; empty: 100)').fill('500');
  await provider.getByRole('button', { name: 'Add provider' }).click();
  // An openai_compatible provider needs its base URL: the server's message under that field.
  const baseUrl = provider.getByLabel('Base URL (required for openai_compatible)');
  await provider.locator('#provider-baseUrl-problem', { hasText: 'required' }).waitFor();
  expect(await baseUrl.getAttribute('aria-invalid')).toBe('true');
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
  await baseUrl.fill('http://127.0.0.1:9/v1');
  await provider.getByLabel('API key').fill('sk-local-0123456789');
  await provider.getByRole('button', { name: 'Add provider' }).click();
  await page.getByRole('status').filter({ hasText: 'Added local-llm (version 1)' }).waitFor();
  const row = page.getByRole('row').filter({ hasText: 'local-llm' });
  await row.filter({ hasText: 'api v1' }).filter({ hasText: 'set (hidden)' }).waitFor();

  // Editing keeps the stored key when the field is left empty.
  await chooseOption(page.getByLabel('Provider', { exact: true }), 'local-llm (api v1)');
  const edit = page.getByRole('form', { name: 'Edit provider local-llm' });
  await edit.getByLabel('Other models (comma-separated)').fill('large');
  await edit.getByRole('button', { name: 'Save provider' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved local-llm (version 2)' }).waitFor();
  await row.filter({ hasText: 'small, large' }).filter({ hasText: 'set (hidden)' }).waitFor();
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
});

test('deletes a registry agent and provider from the System page after a confirmation; a refusal shows in the dialog', async () => {
  const api = createCognitionClient({ url: `${server.url}/trpc` });
  const agentRow = page.getByRole('row').filter({ hasText: 'lister' });
  await agentRow.filter({ hasText: 'api v2' }).waitFor();
  // Someone else saves the agent after the page read it: the page's version (2) is stale.
  await api.agents.update.mutate({
    name: 'lister',
    description: 'Changed elsewhere.',
    tools: ['ls'],
    system_prompt: 'You list files.',
  });
  await agentRow.getByRole('button', { name: 'Delete agent lister' }).click();
  const dialog = page.getByRole('alertdialog', { name: 'Delete agent lister?' });
  await dialog.getByText('(version 2)').waitFor();
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
  await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
  // The server refuses (version conflict); the dialog stays open and says so.
  await dialog.getByRole('alert').filter({ hasText: 'Someone changed this agent' }).waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'system-delete.png') });
  expect((await api.agents.list.query()).map((a) => a.name)).toContain('lister');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
  // The list shows the current version now; deleting that one goes through.
  await agentRow.filter({ hasText: 'api v3' }).waitFor();
  await agentRow.getByRole('button', { name: 'Delete agent lister' }).click();
  await dialog.getByText('(version 3)').waitFor();
  await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
  await agentRow.waitFor({ state: 'detached' });
  expect((await api.agents.list.query()).map((a) => a.name)).not.toContain('lister');

  // A provider: Cancel leaves it in place, confirming deletes it.
  const providerRow = page.getByRole('row').filter({ hasText: 'local-llm' });
  const confirm = page.getByRole('alertdialog', { name: 'Delete provider local-llm?' });
  await providerRow.getByRole('button', { name: 'Delete provider local-llm' }).click();
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await confirm.waitFor({ state: 'detached' });
  expect((await api.providers.list.query()).map((p) => p.id)).toContain('local-llm');
  await providerRow.getByRole('button', { name: 'Delete provider local-llm' }).click();
  await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
  // While the dialog is open the page behind it is aria-hidden, so its rows are out of the role
  // queries: the dialog closing (once the server answered) comes first.
  await confirm.waitFor({ state: 'detached' });
  await providerRow.waitFor({ state: 'detached' });
  expect((await api.providers.list.query()).map((p) => p.id)).not.toContain('local-llm');
  // Built-in, file and environment entries are the server's own: nothing to delete there.
  expect(await page.getByRole('button', { name: /^Delete (agent|provider) / }).count()).toBe(0);
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
});
