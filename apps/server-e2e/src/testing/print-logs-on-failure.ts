import path from 'node:path';
import { formatTrackedOutput } from './process-logs';
import type { E2eTestState } from './test-state';
import { STATE_KEY } from './test-state';

/**
 * Registered for every e2e spec file (`setupFilesAfterEnv`): when a test fails, prints the tail
 * of what every process tracked in `process-logs.ts` wrote, if it was running during that test;
 * when a beforeAll/afterAll hook failed, everything of the file at its end. The failure
 * state comes from the test environment (`environment.ts`). See apps/server-e2e/README.md.
 */
function state(): E2eTestState | undefined {
  return (globalThis as Record<string, unknown>)[STATE_KEY] as E2eTestState | undefined;
}

let testStartedAt = 0;
function print(title: string, since: number): void {
  // Straight to stderr (jest workers forward it as it comes): the block names its spec file, as
  // its lines may land among other files' output.
  const file = path.relative(process.cwd(), expect.getState().testPath ?? '');
  const rule = '#'.repeat(100);
  process.stderr.write(
    `\n${rule}\n# ${file}: ${title}\n${formatTrackedOutput(since)}\n# end of the logs (${file})\n${rule}\n`,
  );
}

beforeEach(() => {
  testStartedAt = Date.now();
});

afterEach(() => {
  if (!state()?.currentTestFailed) return;
  const name = expect.getState().currentTestName ?? 'a test';
  print(`"${name}" failed; the processes it ran against wrote:`, testStartedAt);
});

afterAll(() => {
  if (state()?.hookFailed) {
    print('A beforeAll/afterAll hook failed; the processes of this file wrote:', 0);
  }
});
