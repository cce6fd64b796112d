import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Locator } from 'playwright-core';
import { chromium } from 'playwright-core';
import { REPO_ROOT } from './paths';

/** Debian's Chromium, which `npm test` installs (tools/provision/ensure-chromium.sh). */
const CHROMIUM = process.env['COGNITION_TEST_CHROMIUM'] ?? '/usr/bin/chromium';

/** Headless Chromium for the browser specs; a missing browser fails with what to do about it. */
export async function launchChromium(): Promise<Browser> {
  try {
    return await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
  } catch (error) {
    throw new Error(
      `chromium: UNAVAILABLE — this test needs Chromium at ${CHROMIUM}: \`npm test\` installs it (tools/provision/ensure-chromium.sh); COGNITION_TEST_CHROMIUM points elsewhere. ${String(error)}`,
    );
  }
}

/**
 * Where a spec writes its screenshots: a temporary folder (removed by `cleanup`), or docs/admin
 * with COGNITION_UPDATE_SCREENSHOTS=1, so a test run leaves the checkout as it found it.
 */
export function screenshotsDir(): { dir: string; cleanup(): void } {
  if (process.env['COGNITION_UPDATE_SCREENSHOTS'] === '1') {
    const dir = path.join(REPO_ROOT, 'docs/admin');
    mkdirSync(dir, { recursive: true });
    return { dir, cleanup: () => undefined };
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cognition-shots-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Picks `option` (its visible text, exactly) in the dashboard's select named by `select` (a Radix
 * Select: a `combobox` button that opens a listbox in a portal, not a native `<select>`), and waits
 * until the select shows it.
 */
export async function chooseOption(select: Locator, option: string): Promise<void> {
  await select.click();
  await select.page().getByRole('option', { name: option, exact: true }).click();
  await select.page().getByRole('listbox').waitFor({ state: 'detached' });
  await select.filter({ hasText: option }).waitFor();
}
