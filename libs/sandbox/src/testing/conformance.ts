import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecutionBackendFactory } from '../port';
import { expectSandboxError } from './expect-sandbox-error';
import { attacksConformance } from './conformance-attacks';
import { executeConformance } from './conformance-execute';
import { fileOperationsConformance } from './conformance-files';
import { orphanConformance } from './conformance-orphans';
import { spawnConformance } from './conformance-spawn';
import { SessionPool } from './session-pool';

/**
 * The behaviour every `ExecutionBackendFactory` must show, including the attacks it must refuse.
 * The factory must use the default protected paths (`.cognition`) and should use a short
 * `killGraceMs` (≤ 1000) so the suite stays quick. `getFactory` is called lazily (inside tests),
 * so it may return a factory created in a `beforeAll`. `freshFactory` creates another instance
 * configured like it (the same state directory, the same container prefix): what a restarted
 * server would build, for the orphan cases.
 */
export function runSandboxConformance(
  name: string,
  getFactory: () => ExecutionBackendFactory,
  freshFactory: () => ExecutionBackendFactory,
): void {
  describe(`${name} sandbox conformance`, () => {
    const pool = new SessionPool(getFactory);
    afterAll(() => pool.cleanup());

    executeConformance(pool);
    fileOperationsConformance(pool);
    attacksConformance(pool);
    orphanConformance(pool, getFactory, freshFactory);
    spawnConformance(pool);

    // Here, not in a file of its own: it needs the factory itself, not only sessions.
    describe('lifecycle', () => {
      test('terminate is idempotent and the backend refuses work afterwards', async () => {
        const s = await pool.create('life');
        await s.backend.terminate();
        await s.backend.terminate();
        await expectSandboxError(s.backend.execute('echo x'), 'TERMINATED');
        await expectSandboxError(s.backend.read('x'), 'TERMINATED');
      });

      test('terminate stops a running command', async () => {
        const s = await pool.create('life');
        await s.backend.execute('true');
        const started = Date.now();
        const running = s.backend.execute('sleep 30', { timeoutMs: 20_000 });
        await new Promise((resolve) => setTimeout(resolve, 300));
        await s.backend.terminate();
        const result = await running;
        expect(result.exitCode).not.toBe(0);
        expect(Date.now() - started).toBeLessThan(10_000);
      });

      test('release terminates the backends of that session', async () => {
        const s = await pool.create('life');
        await getFactory().release(s.sessionId);
        await expectSandboxError(s.backend.ls(), 'TERMINATED');
      });

      test('an invalid session id is INVALID_ARGUMENT', async () => {
        const root = await fs.mkdtemp(path.join(os.tmpdir(), 'cognition-sandbox-'));
        try {
          await expectSandboxError(getFactory().forSession('../evil', root), 'INVALID_ARGUMENT');
          await expectSandboxError(getFactory().forSession('', root), 'INVALID_ARGUMENT');
        } finally {
          await fs.rm(root, { recursive: true, force: true });
        }
      });
    });
  });
}
