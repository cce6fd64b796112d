import type { SuiteContext } from './context';
import { expectStorageError, expectValidationError } from './helpers';

const AGENT = {
  description: 'Reviews code',
  tools: ['read_file', 'grep'],
  temperature: 0.2,
  system_prompt: 'Review carefully — «ünïcode» and "quotes"\nsecond line',
  interrupt_on: { execute: { allowed: ['approve', 'reject'] } },
};

/** The configuration registry: versioned, atomic writes of agents and providers. */
export function registryTests(ctx: SuiteContext): void {
  describe('configuration registry', () => {
    const registry = () => ctx.backend.registry;

    it('creates an entry at version 1 and reads back exactly what was written', async () => {
      const created = await registry().put({
        kind: 'agent',
        name: 'reviewer',
        data: AGENT,
        expectedVersion: null,
      });
      expect(created).toMatchObject({ kind: 'agent', name: 'reviewer', version: 1, data: AGENT });
      expect(created.createdAt).toBeInstanceOf(Date);
      expect(created.updatedAt.getTime()).toBe(created.createdAt.getTime());
      expect(await registry().get('agent', 'reviewer')).toEqual(created);
      expect(await registry().get('provider', 'reviewer')).toBeNull();
      expect(await registry().get('agent', 'missing')).toBeNull();
    });

    it('refuses a second create of one name, and lets exactly one of concurrent creates win', async () => {
      await registry().put({ kind: 'provider', name: 'p1', data: { a: 1 }, expectedVersion: null });
      await expectStorageError(
        registry().put({ kind: 'provider', name: 'p1', data: { a: 2 }, expectedVersion: null }),
        'CONFLICT',
      );
      const results = await Promise.allSettled(
        [1, 2, 3, 4].map((n) =>
          registry().put({ kind: 'agent', name: 'racy', data: { n }, expectedVersion: null }),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect((await registry().get('provider', 'p1'))?.data).toEqual({ a: 1 });
    });

    it('replaces at the expected version (+1), refuses a stale or missing one', async () => {
      const v1 = await registry().put({
        kind: 'agent',
        name: 'a',
        data: { n: 1 },
        expectedVersion: null,
      });
      const v2 = await registry().put({
        kind: 'agent',
        name: 'a',
        data: { n: 2 },
        expectedVersion: 1,
      });
      expect(v2).toMatchObject({ version: 2, data: { n: 2 } });
      expect(v2.createdAt.getTime()).toBe(v1.createdAt.getTime());
      expect(v2.updatedAt.getTime()).toBeGreaterThanOrEqual(v1.updatedAt.getTime());
      await expectStorageError(
        registry().put({ kind: 'agent', name: 'a', data: { n: 3 }, expectedVersion: 1 }),
        'VERSION_CONFLICT',
      );
      expect((await registry().get('agent', 'a'))?.data).toEqual({ n: 2 });
      await expectStorageError(
        registry().put({ kind: 'agent', name: 'nobody', data: {}, expectedVersion: 1 }),
        'NOT_FOUND',
      );
      expect(await registry().get('agent', 'nobody')).toBeNull();
    });

    it('lets exactly one of concurrent writers at one version win', async () => {
      await registry().put({ kind: 'agent', name: 'hot', data: { n: 0 }, expectedVersion: null });
      const results = await Promise.allSettled(
        [1, 2, 3, 4, 5].map((n) =>
          registry().put({ kind: 'agent', name: 'hot', data: { n }, expectedVersion: 1 }),
        ),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected')
          expect((r.reason as { code?: string }).code).toBe('VERSION_CONFLICT');
      }
      expect(await registry().get('agent', 'hot')).toMatchObject({ version: 2 });
    });

    it('creates or replaces without an expected version', async () => {
      expect(await registry().put({ kind: 'provider', name: 'u', data: { n: 1 } })).toMatchObject({
        version: 1,
      });
      expect(await registry().put({ kind: 'provider', name: 'u', data: { n: 2 } })).toMatchObject({
        version: 2,
        data: { n: 2 },
      });
    });

    it('lists by kind then name, one kind or all', async () => {
      for (const [kind, name] of [
        ['provider', 'zeta'],
        ['agent', 'beta'],
        ['agent', 'Alpha'],
        ['provider', 'beta'],
      ] as const) {
        await registry().put({ kind, name, data: { name }, expectedVersion: null });
      }
      expect((await registry().list()).map((e) => `${e.kind}:${e.name}`)).toEqual([
        'agent:Alpha',
        'agent:beta',
        'provider:beta',
        'provider:zeta',
      ]);
      expect((await registry().list('provider')).map((e) => e.name)).toEqual(['beta', 'zeta']);
    });

    it('deletes at the expected version only; a new entry of the name starts over at 1', async () => {
      await registry().put({ kind: 'agent', name: 'gone', data: { n: 1 }, expectedVersion: null });
      await registry().put({ kind: 'agent', name: 'gone', data: { n: 2 }, expectedVersion: 1 });
      await expectStorageError(
        registry().delete({ kind: 'agent', name: 'gone', expectedVersion: 1 }),
        'VERSION_CONFLICT',
      );
      expect(await registry().get('agent', 'gone')).not.toBeNull();
      expect(await registry().delete({ kind: 'agent', name: 'gone', expectedVersion: 2 })).toBe(
        true,
      );
      expect(await registry().get('agent', 'gone')).toBeNull();
      expect(await registry().delete({ kind: 'agent', name: 'gone' })).toBe(false);
      const again = await registry().put({
        kind: 'agent',
        name: 'gone',
        data: { n: 3 },
        expectedVersion: null,
      });
      expect(again.version).toBe(1);
    });

    it('rejects bad input with VALIDATION_ERROR naming the field', async () => {
      await expectValidationError(
        registry().put({ kind: 'tool' as 'agent', name: 'x', data: {} }),
        'kind',
      );
      await expectValidationError(registry().put({ kind: 'agent', name: '', data: {} }), 'name');
      await expectValidationError(
        registry().put({
          kind: 'agent',
          name: 'x',
          data: [] as unknown as Record<string, unknown>,
        }),
        'data',
      );
      await expectValidationError(
        registry().put({ kind: 'agent', name: 'x', data: {}, expectedVersion: 0 }),
        'expectedVersion',
      );
      await expectValidationError(
        registry().delete({ kind: 'agent', name: 'x', expectedVersion: -1 }),
        'expectedVersion',
      );
    });
  });
}
