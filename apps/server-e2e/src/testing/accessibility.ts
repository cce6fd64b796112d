import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';

/**
 * axe-core's browser bundle, evaluated in the page under test (it is not a page dependency).
 * Not through a script tag: the dashboard's Content-Security-Policy (`script-src 'self'`) rightly
 * refuses an inline one, and the check must not switch that policy off.
 */
const AXE = path.join(path.dirname(require.resolve('axe-core')), 'axe.min.js');
let axeSource: string | undefined;

export interface AccessibilityViolation {
  id: string;
  impact: string;
  help: string;
  /** The CSS selectors of the offending elements, so a failing expectation names them. */
  targets: string[];
}

/**
 * Waits until every animation that ends has ended (a dialog fading in, a menu sliding open):
 * mid-animation an element is partly transparent, and axe measures the contrast of that frame,
 * not of what the user reads once it settles. Endless ones (a spinner) are not waited for.
 */
const SETTLE_ANIMATIONS = `Promise.all(document.getAnimations()
  .filter((a) => a.effect && a.effect.getComputedTiming().endTime !== Infinity)
  .map((a) => a.finished.catch(() => undefined)))`;

/**
 * Runs axe-core on the page once its animations settled and returns its serious and critical
 * violations (the dashboard's rule: none), each with its rule id, what it asks for and where.
 * Expect `[]`.
 */
export async function seriousAccessibilityViolations(
  page: Page,
): Promise<AccessibilityViolation[]> {
  await page.evaluate(SETTLE_ANIMATIONS);
  if (!(await page.evaluate('typeof window.axe !== "undefined"')))
    await page.evaluate((axeSource ??= readFileSync(AXE, 'utf8')));
  const violations = await page.evaluate<
    { id: string; impact?: string | null; help: string; nodes: { target: unknown[] }[] }[]
  >('window.axe.run(document).then((r) => r.violations)');
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact ?? '',
      help: v.help,
      targets: v.nodes.flatMap((n) => n.target.map(String)),
    }));
}
