import type { OrphanReport, OrphanTarget } from '@cognition/sandbox';
import type { StorageBackend } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import { InMemoryEventLog } from '../events/event-log';
import { newRunId } from '../ids';
import { silentLogger } from '../logger';
import { ActiveRuns } from './coordination/active-runs';
import { InProcessRunControl } from './coordination/in-process-run-control';
import { RunLeases } from './coordination/run-leases';
import { RunRecovery } from './run-recovery';

/**
 * Issue 31: recovery ends what a run's dead process left running in the sandbox before it does
 * anything else with the run (resume, which tells the model "Not run again", or interrupt).
 */
describe('RunRecovery ends the commands a crashed run left running', () => {
  let storage: StorageBackend;
  let log: InMemoryEventLog;
  beforeEach(async () => {
    storage = createMemoryStorage();
    await storage.initialize();
    log = new InMemoryEventLog();
  });
  afterEach(() => storage.close());

  function recovery(
    active: ActiveRuns,
    reapOrphans: (target: OrphanTarget) => Promise<OrphanReport>,
    steps: string[],
  ): RunRecovery {
    return new RunRecovery({
      storage,
      log,
      logger: {
        ...silentLogger,
        error: (_obj, msg) => steps.push(`error: ${msg ?? ''}`),
      },
      active,
      executor: { execute: () => Promise.resolve() },
      mode: 'interrupt',
      maxRecoveries: 3,
      startNext: () => Promise.resolve(),
      leases: new RunLeases(storage, null, active, silentLogger),
      sandbox: {
        reapOrphans: (target) => {
          steps.push(`reap ${target.sessionId} ${target.runId ?? ''}`);
          return reapOrphans(target);
        },
      },
    });
  }

  async function orphan() {
    const session = await storage.sessions.create({ agentName: 'default', config: {} }, {});
    const { run } = await storage.runs.create({
      id: newRunId(),
      sessionId: session.id,
      status: 'running',
    });
    return run;
  }

  it('reaps the run (by session and run id) before ending it', async () => {
    const run = await orphan();
    const steps: string[] = [];
    const active = new ActiveRuns(new InProcessRunControl(), log, silentLogger);
    const report = await recovery(
      active,
      async () => {
        // The run is still active while its leftovers are ended.
        steps.push(`status ${(await storage.runs.get(run.id))?.status ?? ''}`);
        return { killed: 1, ended: 0, unreachable: 0 };
      },
      steps,
    ).recover();
    expect(steps).toEqual([`reap ${run.sessionId} ${run.id}`, 'status running']);
    expect(report.interrupted.map((r) => r.id)).toEqual([run.id]);
  });

  it('a sandbox that cannot reap (Docker down) is logged and does not keep the run stuck', async () => {
    const run = await orphan();
    const steps: string[] = [];
    const active = new ActiveRuns(new InProcessRunControl(), log, silentLogger);
    const report = await recovery(
      active,
      () => Promise.reject(new Error('engine unavailable')),
      steps,
    ).recover();
    expect(steps).toEqual([
      `reap ${run.sessionId} ${run.id}`,
      'error: could not end the commands the run left running',
    ]);
    expect(report.interrupted.map((r) => r.id)).toEqual([run.id]);
  });
});
