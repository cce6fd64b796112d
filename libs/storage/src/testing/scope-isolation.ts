import { HumanMessage } from '@langchain/core/messages';
import { scopedStore, threadNamespaceLabel } from '../store/scoped-store';
import { putWithTtl } from '../store/store-ttl';
import type { SuiteContext } from './context';
import {
  countCheckpoints,
  expectStorageError,
  latestCheckpoint,
  putMessagesCheckpoint,
  sleep,
  uid,
} from './helpers';

const TENANT_A = { tenant: 'a', user: 'alice' };
const TENANT_B = { tenant: 'b', user: 'alice' };

export function isolationTests(ctx: SuiteContext): void {
  describe('scope isolation', () => {
    it('never shows or changes one tenant’s sessions, messages or runs to another', async () => {
      const session = await ctx.backend.sessions.create({ title: 'A only' }, TENANT_A);
      const message = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'a',
      });
      const { run } = await ctx.backend.runs.create({ sessionId: session.id });
      await ctx.backend.sessions.create({ title: 'B only' }, TENANT_B);

      expect(await ctx.backend.sessions.get(session.id, TENANT_B)).toBeNull();
      expect((await ctx.backend.sessions.list({}, TENANT_B)).sessions.map((s) => s.title)).toEqual([
        'B only',
      ]);
      expect((await ctx.backend.sessions.list({}, TENANT_B)).total).toBe(1);
      expect(await ctx.backend.messages.get(session.id, message.id, TENANT_B)).toBeNull();
      await expectStorageError(
        ctx.backend.messages.page(session.id, {}, TENANT_B),
        'SESSION_NOT_FOUND',
      );
      await expectStorageError(
        ctx.backend.sessions.update(session.id, { title: 'B was here' }, TENANT_B),
        'SESSION_NOT_FOUND',
      );
      expect(await ctx.backend.sessions.delete(session.id, TENANT_B)).toBe(false);

      expect(await ctx.backend.sessions.get(session.id, TENANT_A)).toMatchObject({
        title: 'A only',
        version: 1,
        messageCount: 1,
      });
      expect(await ctx.backend.messages.listAll(session.id, TENANT_A)).toEqual([message]);
      expect(await ctx.backend.runs.list(session.id)).toEqual([run]);
    });

    it('keeps tenants’ store items apart through scopedStore', async () => {
      const storeA = scopedStore(ctx.backend.store, TENANT_A);
      const storeB = scopedStore(ctx.backend.store, TENANT_B);
      const storeAlice = scopedStore(ctx.backend.store, { user: 'alice' });
      await storeA.put(['memories'], 'pref', { tea: 'green' });
      await storeB.put(['memories'], 'pref', { tea: 'black' });

      expect((await storeA.get(['memories'], 'pref'))?.value).toEqual({ tea: 'green' });
      expect((await storeB.get(['memories'], 'pref'))?.value).toEqual({ tea: 'black' });
      expect((await storeA.get(['memories'], 'pref'))?.namespace).toEqual(['memories']);
      expect((await storeA.search(['memories'])).map((item) => item.value)).toEqual([
        { tea: 'green' },
      ]);
      expect(await storeA.listNamespaces()).toEqual([['memories']]);
      expect(await storeAlice.get(['memories'], 'pref')).toBeNull();
      expect(await storeAlice.search([])).toEqual([]);
      expect(await storeAlice.listNamespaces()).toEqual([]);

      await storeB.delete(['memories'], 'pref');
      expect(await storeB.get(['memories'], 'pref')).toBeNull();
      expect((await storeA.get(['memories'], 'pref'))?.value).toEqual({ tea: 'green' });

      // A tenant cannot reach another scope by spelling its labels in a namespace.
      const spoof = scopedStore(ctx.backend.store, { tenant: 'a' });
      await spoof.put(['user=alice', 'memories'], 'pref', { tea: 'spoofed' });
      expect((await storeA.get(['memories'], 'pref'))?.value).toEqual({ tea: 'green' });
      expect(await storeA.search([], { limit: 50 })).toHaveLength(1);
    });

    it('passes TTLs through scopedStore', async () => {
      const storeA = scopedStore(ctx.backend.store, TENANT_A);
      await putWithTtl(storeA, ['short'], 'k', { v: 1 }, 0.005);
      expect((await storeA.get(['short'], 'k'))?.value).toEqual({ v: 1 });
      await sleep(650);
      expect(await storeA.get(['short'], 'k')).toBeNull();
    });
  });

  describe('cascade delete', () => {
    it('removes messages, runs, checkpoints and thread-scoped store items of the session only', async () => {
      const doomed = await ctx.backend.sessions.create({}, TENANT_A);
      const survivor = await ctx.backend.sessions.create({}, TENANT_A);
      const humanId = uid('h');
      await putMessagesCheckpoint(ctx.backend, doomed.threadId, [
        new HumanMessage({ id: humanId, content: 'x' }),
      ]);
      await putMessagesCheckpoint(ctx.backend, doomed.threadId, [
        new HumanMessage({ id: humanId, content: 'x' }),
      ]);
      await putMessagesCheckpoint(
        ctx.backend,
        doomed.threadId,
        [new HumanMessage({ id: uid('h'), content: 's' })],
        {
          namespace: 'subgraph',
        },
      );
      const config = await ctx.backend.checkpointer.getTuple({
        configurable: { thread_id: doomed.threadId, checkpoint_ns: '' },
      });
      await ctx.backend.checkpointer.putWrites(
        config?.config ?? {},
        [['messages', 'pending write']],
        'task-1',
      );
      const pendingId = (
        await ctx.backend.messages.create({ sessionId: doomed.id, role: 'user', content: 'p' })
      ).id;
      const { run } = await ctx.backend.runs.create({ sessionId: doomed.id, status: 'running' });
      const label = threadNamespaceLabel(doomed.threadId);
      await ctx.backend.store.put(['memories', label], 'fact', { v: 1 });
      await ctx.backend.store.put([label], 'root', { v: 1 });
      const scoped = scopedStore(ctx.backend.store, TENANT_A);
      await scoped.put(['notes', label, 'deep'], 'fact', { v: 2 });
      await scoped.put(['notes', 'global'], 'fact', { v: 3 });

      const survivorLabel = threadNamespaceLabel(survivor.threadId);
      const survivorMessage = uid('h');
      await putMessagesCheckpoint(ctx.backend, survivor.threadId, [
        new HumanMessage({ id: survivorMessage, content: 'y' }),
      ]);
      const { run: survivorRun } = await ctx.backend.runs.create({ sessionId: survivor.id });
      await ctx.backend.store.put(['memories', survivorLabel], 'fact', { v: 4 });

      expect(await ctx.backend.sessions.delete(doomed.id, TENANT_A)).toBe(true);

      expect(await ctx.backend.sessions.get(doomed.id, {})).toBeNull();
      expect(await ctx.backend.messages.get(doomed.id, humanId, {})).toBeNull();
      expect(await ctx.backend.messages.get(doomed.id, pendingId, {})).toBeNull();
      expect(await ctx.backend.runs.get(run.id)).toBeNull();
      expect(await ctx.backend.runs.list(doomed.id)).toEqual([]);
      expect((await ctx.backend.runs.listActive()).map((r) => r.id)).toEqual([survivorRun.id]);
      expect(await latestCheckpoint(ctx.backend, doomed.threadId)).toBeUndefined();
      expect(await latestCheckpoint(ctx.backend, doomed.threadId, 'subgraph')).toBeUndefined();
      expect(await countCheckpoints(ctx.backend, doomed.threadId)).toBe(0);
      expect(await ctx.backend.store.get(['memories', label], 'fact')).toBeNull();
      expect(await ctx.backend.store.get([label], 'root')).toBeNull();
      expect(await scoped.get(['notes', label, 'deep'], 'fact')).toBeNull();
      expect((await scoped.get(['notes', 'global'], 'fact'))?.value).toEqual({ v: 3 });

      // Re-creating a session with the same id starts from nothing.
      const reborn = await ctx.backend.sessions.create({ id: doomed.id }, TENANT_A);
      expect(reborn.messageCount).toBe(0);
      expect(await ctx.backend.messages.listAll(doomed.id, {})).toEqual([]);
      expect(await ctx.backend.runs.list(doomed.id)).toEqual([]);

      expect((await ctx.backend.messages.listAll(survivor.id, {})).map((m) => m.id)).toEqual([
        survivorMessage,
      ]);
      expect(await ctx.backend.runs.get(survivorRun.id)).toEqual(survivorRun);
      expect(await countCheckpoints(ctx.backend, survivor.threadId)).toBe(1);
      expect((await ctx.backend.store.get(['memories', survivorLabel], 'fact'))?.value).toEqual({
        v: 4,
      });
    });
  });

  describe('lifecycle', () => {
    it('initializes idempotently without losing data', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      await ctx.backend.initialize();
      await ctx.backend.initialize();
      expect(await ctx.backend.sessions.get(session.id, {})).toEqual(session);
    });

    it('reports health with its backend kind and latency', async () => {
      const health = await ctx.backend.healthCheck();
      expect(['memory', 'sqlite', 'postgres']).toContain(ctx.backend.kind);
      expect(health.backend).toBe(ctx.backend.kind);
      expect(health.ok).toBe(true);
      expect(typeof health.latencyMs).toBe('number');
      expect(health.latencyMs).toBeGreaterThanOrEqual(0);
      expect(health.error).toBeUndefined();
    });

    it('closes idempotently', async () => {
      await ctx.backend.close();
      await expect(ctx.backend.close()).resolves.toBeUndefined();
    });
  });
}
