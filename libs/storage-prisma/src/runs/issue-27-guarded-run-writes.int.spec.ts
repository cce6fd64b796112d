import type { Usage } from '@cognition/contracts';
import type { StorageBackend } from '@cognition/storage';
import pg from 'pg';
import { createPrismaStorage } from '../prisma-storage';
import type { TestDatabase } from '../testing/test-db';
import { createTestDatabase } from '../testing/test-db';

/**
 * On PostgreSQL a run's create is one statement, and its updates are one statement guarded by
 * the row's `xmin` (from the store's own last write of the run, else from one unlocked read),
 * falling back to the locked transaction when the row changed in between. These cases put a
 * write of another node in that window and check that the usage records still count the run
 * once: without the guard, the update's usage difference is computed from the stale version
 * and added on top of the other node's.
 */

let database: TestDatabase;
/** Three backends with their own pools and caches stand for three server processes. */
let nodes: StorageBackend[];

beforeAll(async () => {
  database = await createTestDatabase('postgresql');
  if (database.provider !== 'postgresql') throw new Error('postgresql only');
  const url = database.url;
  nodes = [0, 1, 2].map(() => createPrismaStorage({ provider: 'postgresql', url, poolSize: 3 }));
  await Promise.all(nodes.map((node) => node.initialize()));
});
afterAll(async () => {
  for (const node of nodes) await node.close();
  await database.cleanup();
});

function node(index: number): StorageBackend {
  const found = nodes[index];
  if (!found) throw new Error(`no node ${index}`);
  return found;
}

function usage(tokensIn: number): Usage {
  return {
    inputTokens: tokensIn,
    outputTokens: 10,
    costUsd: 0.5,
    provider: 'openai',
    model: 'gpt-4o',
    estimated: false,
  };
}

type QueryArgs = Parameters<pg.Client['query']>;

/**
 * Runs `between` once, when the statement named `name` has answered and before its caller sees
 * the answer (node-postgres's pool passes a callback; a client's own query returns a promise).
 * Returns the names (or texts) of every statement sent meanwhile; `restore()` ends the spy.
 */
function interpose(name: string, between: () => Promise<unknown>) {
  const original = pg.Client.prototype.query;
  const sent: string[] = [];
  let done = false;
  const spy = jest.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
    this: pg.Client,
    ...args: unknown[]
  ) {
    const config = args[0] as string | { name?: string; text?: string };
    const label = typeof config === 'string' ? config : (config.name ?? config.text ?? '');
    sent.push(label);
    const last = args[args.length - 1];
    if (label !== name || done || typeof last !== 'function') {
      return (original as (...a: unknown[]) => unknown).apply(this, args) as ReturnType<
        pg.Client['query']
      >;
    }
    done = true;
    const callback = last as (error: unknown, result: unknown) => void;
    const wrapped = (error: unknown, result: unknown): void => {
      between().then(
        () => callback(error, result),
        (failure: unknown) => callback(failure, undefined),
      );
    };
    return (original as (...a: unknown[]) => unknown).apply(this, [
      ...args.slice(0, -1),
      wrapped,
    ] as QueryArgs) as ReturnType<pg.Client['query']>;
  });
  return { sent, restore: () => spy.mockRestore() };
}

async function totals(sessionId: string) {
  const report = await node(0).usage.get(sessionId, {});
  return { usage: report?.usage, models: report?.models };
}

it("an update after another node's update of the same run counts the run once", async () => {
  const session = await node(0).sessions.create({}, {});
  const { run } = await node(0).runs.create({ sessionId: session.id, status: 'running' });
  // Node 1 reports usage; node 0's version of the row (from its create) is now stale.
  await node(1).runs.update(run.id, { usage: usage(100) });
  const finished = await node(0).runs.update(run.id, {
    status: 'completed',
    usage: usage(150),
    finishedAt: new Date(),
  });

  expect(finished.usage?.inputTokens).toBe(150);
  const { usage: sums, models } = await totals(session.id);
  expect(sums).toMatchObject({ runs: 1, tokensIn: 150, tokensOut: 10, costUsd: 0.5 });
  expect(models).toEqual([expect.objectContaining({ model: 'gpt-4o', calls: 1, tokensIn: 150 })]);
});

it('a write landing between the unlocked read and the guarded statement sends the update to the locked path', async () => {
  const session = await node(0).sessions.create({}, {});
  const { run } = await node(0).runs.create({ sessionId: session.id, status: 'running' });
  // Node 2 never wrote this run: it reads it first, and node 1 writes in between.
  const window = interpose('cognition_run_read_versioned', () =>
    node(1).runs.update(run.id, { usage: usage(100) }),
  );
  try {
    await node(2).runs.update(run.id, { status: 'completed', usage: usage(150) });
  } finally {
    window.restore();
  }

  const { usage: sums } = await totals(session.id);
  expect(sums).toMatchObject({ runs: 1, errorCount: 0, tokensIn: 150 });
  expect((await node(0).runs.get(run.id))?.status).toBe('completed');
  expect(window.sent).toContain('cognition_run_lock');
});

it('a lease renewal in the window is kept, and the update still applies', async () => {
  const session = await node(0).sessions.create({}, {});
  const lease = new Date(Date.now() + 60_000);
  const { run } = await node(0).runs.create({
    sessionId: session.id,
    status: 'running',
    ownerNode: 'node-0',
    leaseExpiresAt: lease,
  });
  const renewed = new Date(lease.getTime() + 60_000);
  const window = interpose('cognition_run_read_versioned', () =>
    node(0).runs.renewLease(run.id, 'node-0', renewed),
  );
  try {
    await node(2).runs.update(run.id, { usage: usage(40) });
  } finally {
    window.restore();
  }

  expect(window.sent).toContain('cognition_run_lock');
  const stored = await node(0).runs.get(run.id);
  expect(stored?.leaseExpiresAt?.getTime()).toBe(renewed.getTime());
  expect(stored?.usage?.inputTokens).toBe(40);
  expect((await totals(session.id)).usage).toMatchObject({ runs: 1, tokensIn: 40 });
});

it("a turn's create, start and finish on one node are one statement each", async () => {
  const session = await node(0).sessions.create({}, {});
  const window = interpose('none', () => Promise.resolve());
  try {
    const { run } = await node(0).runs.create({ sessionId: session.id, status: 'queued' });
    await node(0).runs.update(run.id, { status: 'running', startedAt: new Date() });
    await node(0).runs.update(run.id, {
      status: 'completed',
      usage: usage(7),
      finishedAt: new Date(),
    });
  } finally {
    window.restore();
  }

  expect(window.sent).toEqual([
    'cognition_run_insert_with_usage',
    'cognition_run_update_guarded_19',
    'cognition_run_update_guarded_39',
  ]);
  expect((await totals(session.id)).usage).toMatchObject({ runs: 1, tokensIn: 7 });
});

it('the guarded update keeps the one-active-run rule: re-activating beside an active run is RUN_IN_PROGRESS', async () => {
  const session = await node(0).sessions.create({}, {});
  const { run: first } = await node(0).runs.create({ sessionId: session.id, status: 'running' });
  await node(0).runs.update(first.id, { status: 'completed', finishedAt: new Date() });
  await node(1).runs.create({ sessionId: session.id, status: 'running' });
  await expect(node(0).runs.update(first.id, { status: 'running' })).rejects.toMatchObject({
    code: 'RUN_IN_PROGRESS',
  });
  expect((await totals(session.id)).usage).toMatchObject({ runs: 2 });
});
