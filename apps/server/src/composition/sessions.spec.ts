import { createLogger } from '../cli/logger';
import { createSessionLifecycle } from './sessions';
import type { TestApp } from '../testing/test-app';
import { createTestApp } from '../testing/test-app';
import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';

// The server's session lifecycle: TTL sweep (with sandbox release) and checkpoint retention.

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(async () => {
  await t.close();
});
// The lifecycle's workspace root: the runs of these specs make session folders there.
afterAll(() => {
  rmSync('/tmp/cognition-sessions-spec', { recursive: true, force: true });
});

const quiet = () =>
  createLogger(
    'error',
    new Writable({
      write(_chunk, _encoding, done) {
        done();
      },
    }),
  );

it('sweeps expired sessions (TTL and expiresAt), releasing their sandboxes, and keeps the rest', async () => {
  const released: string[] = [];
  const lifecycle = createSessionLifecycle({
    config: {
      abandonAfterSeconds: 1800,
      ttlSeconds: 60,
      sweepIntervalMs: 3_600_000,
      checkpointRetention: 'all',
    },
    storage: t.storage,
    runs: t.runs,
    workspaceRoot: '/tmp/cognition-sessions-spec',
    release: (id) => {
      released.push(id);
      return Promise.resolve();
    },
    logger: quiet(),
  });
  try {
    const idle = await lifecycle.service.create({ title: 'idle' }, {});
    const pinned = await lifecycle.service.create(
      { title: 'pinned', expiresAt: new Date(Date.now() + 3_600_000) },
      {},
    );
    const gone = await lifecycle.service.create(
      { title: 'gone', expiresAt: new Date(Date.now() - 1) },
      {},
    );
    expect(idle.workspacePath).toBe(`/tmp/cognition-sessions-spec/${idle.id}`);
    expect(await lifecycle.sweep()).toBe(1);
    expect(released).toEqual([gone.id]);
    // Two minutes later the idle one has outlived the TTL; the pinned one has its own expiry.
    t.storage.setSessionPolicy({ now: () => new Date(Date.now() + 120_000) });
    expect(await lifecycle.sweep()).toBe(1);
    expect(released).toEqual([gone.id, idle.id]);
    t.storage.setSessionPolicy({ now: () => new Date() });
    expect((await t.storage.sessions.list({}, {})).sessions.map((s) => s.id)).toEqual([pinned.id]);
  } finally {
    lifecycle.stop();
  }
});

it('prunes checkpoints of recently active sessions with the server default, a session override winning', async () => {
  const lifecycle = createSessionLifecycle({
    config: {
      abandonAfterSeconds: 1800,
      ttlSeconds: 0,
      sweepIntervalMs: 3_600_000,
      checkpointRetention: 'keep_last:2',
    },
    storage: t.storage,
    runs: t.runs,
    workspaceRoot: '/tmp/cognition-sessions-spec',
    logger: quiet(),
  });
  try {
    const byDefault = await lifecycle.service.create({}, {});
    const keepAll = await lifecycle.service.create({ checkpointRetention: 'all' }, {});
    for (const session of [byDefault, keepAll]) {
      for (const content of ['one', 'two']) {
        t.model.push({ text: 'ok' });
        const sent = await t.runs.scheduler.send({ sessionId: session.id, scope: {}, content });
        for await (const _ of await t.runs.events(session.id, {}, { runId: sent.run.id })) {
          // drain until the run ends
        }
      }
    }
    const before = (await t.storage.checkpoints.list(keepAll.threadId)).length;
    expect(before).toBeGreaterThan(2);
    expect(await lifecycle.prune()).toBe(before - 2);
    expect(await t.storage.checkpoints.list(byDefault.threadId)).toHaveLength(2);
    expect(await t.storage.checkpoints.list(keepAll.threadId)).toHaveLength(before);
    expect((await t.storage.messages.listAll(byDefault.id, {})).map((m) => m.content)).toEqual([
      'one',
      'ok',
      'two',
      'ok',
    ]);
    // Nothing new since the last pass: nothing to do.
    expect(await lifecycle.prune()).toBe(0);
  } finally {
    lifecycle.stop();
  }
});
