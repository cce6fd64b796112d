import type { NewAssistant } from '../domains/assistants';
import type { SuiteContext } from './context';
import { expectStorageError, expectValidationError, uid } from './helpers';

function newAssistant(overrides: Partial<NewAssistant> = {}): NewAssistant {
  return {
    id: uid('asst'),
    graphId: 'agent',
    name: 'Reviewer «ünïcode»',
    description: null,
    config: { configurable: { model: 'fake', depth: 2 }, tags: ['a'] },
    context: { tone: 'dry' },
    metadata: { team: 'ops', nested: { n: 1, list: [true, null] } },
    ...overrides,
  };
}

/** Assistants: tenant-scoped CRUD with versions (create, patch, set latest, delete). */
export function assistantTests(ctx: SuiteContext): void {
  describe('assistants', () => {
    const store = () => ctx.backend.assistants;
    // Tenants of their own per test: a harness may share one database between tests.
    let A: { tenant: string };
    let B: { tenant: string };
    beforeEach(() => {
      A = { tenant: uid('a') };
      B = { tenant: uid('b') };
    });

    it('creates an assistant at version 1 and reads it back exactly, in its scope only', async () => {
      const input = newAssistant();
      const created = await store().create(input, A);
      const { id, ...fields } = input;
      expect(created).toMatchObject({ ...fields, id, version: 1, scope: A });
      expect(created.createdAt).toBeInstanceOf(Date);
      expect(await store().get(id, A)).toEqual(created);
      expect(await store().get(id, {})).toEqual(created);
      expect(await store().get(id, B)).toBeNull();
      expect(await store().listVersions(id, A)).toEqual([
        { ...fields, assistantId: id, version: 1, createdAt: created.createdAt },
      ]);
      expect(await store().listVersions(id, B)).toEqual([]);
    });

    it('refuses a second assistant with an id already stored, in any tenant', async () => {
      const input = newAssistant();
      await store().create(input, A);
      await expectStorageError(store().create(input, A), 'CONFLICT');
      await expectStorageError(store().create({ ...input, graphId: 'other' }, B), 'CONFLICT');
    });

    it('refuses bad input naming the field', async () => {
      await expectValidationError(store().create(newAssistant({ graphId: '' }), A), 'graphId');
      const created = await store().create(newAssistant(), A);
      await expectValidationError(store().update(created.id, { name: 7 } as never, A), 'name');
    });

    it('patches into a new current version: fields replaced, metadata keys merged', async () => {
      const created = await store().create(newAssistant(), A);
      const patched = await store().update(
        created.id,
        { config: { recursion_limit: 5 }, metadata: { team: 'dev', extra: 1 }, description: 'd' },
        A,
      );
      expect(patched).toMatchObject({
        version: 2,
        name: created.name,
        graphId: created.graphId,
        context: created.context,
        config: { recursion_limit: 5 },
        metadata: { team: 'dev', extra: 1, nested: { n: 1, list: [true, null] } },
        description: 'd',
        createdAt: created.createdAt,
      });
      expect(await store().get(created.id, A)).toEqual(patched);
      const versions = await store().listVersions(created.id, A);
      expect(versions.map((v) => v.version)).toEqual([2, 1]);
      expect(versions[1]).toMatchObject({ config: created.config, metadata: created.metadata });
      await expectStorageError(store().update(created.id, { name: 'x' }, B), 'NOT_FOUND');
      await expectStorageError(store().update(uid('missing'), { name: 'x' }, A), 'NOT_FOUND');
    });

    it('gives concurrent patches one version number each', async () => {
      const created = await store().create(newAssistant(), A);
      const names = Array.from({ length: 6 }, (_, i) => `n${i}`);
      await Promise.all(names.map((name) => store().update(created.id, { name }, A)));
      const versions = await store().listVersions(created.id, A);
      expect(versions.map((v) => v.version)).toEqual([7, 6, 5, 4, 3, 2, 1]);
      expect(new Set(versions.slice(0, 6).map((v) => v.name))).toEqual(new Set(names));
      expect((await store().get(created.id, A))?.version).toBe(7);
    });

    it('sets an older version current without adding one; the next patch takes max+1', async () => {
      const created = await store().create(newAssistant(), A);
      await store().update(created.id, { name: 'second', metadata: { v: 2 } }, A);
      const back = await store().setLatest(created.id, 1, A);
      expect(back).toMatchObject({ version: 1, name: created.name, metadata: created.metadata });
      expect(await store().get(created.id, A)).toEqual(back);
      expect((await store().listVersions(created.id, A)).length).toBe(2);
      const third = await store().update(created.id, { description: 'three' }, A);
      expect(third).toMatchObject({ version: 3, name: created.name, description: 'three' });
      await expectStorageError(store().setLatest(created.id, 9, A), 'NOT_FOUND');
      await expectStorageError(store().setLatest(created.id, 1, B), 'NOT_FOUND');
    });

    it('lists a tenant’s assistants newest first, by graph on demand', async () => {
      const first = await store().create(newAssistant({ graphId: 'g1' }), A);
      const second = await store().create(newAssistant({ graphId: 'g2' }), A);
      const other = await store().create(newAssistant({ graphId: 'g1' }), B);
      const listed = await store().list(A);
      expect(listed.map((a) => a.id)).toEqual(
        [first, second]
          .sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : -1))
          .map((a) => a.id),
      );
      expect((await store().list(A, { graphId: 'g1' })).map((a) => a.id)).toEqual([first.id]);
      const all = (await store().list({})).map((a) => a.id);
      expect(all).toEqual(expect.arrayContaining([first.id, second.id, other.id]));
    });

    it('deletes an assistant with its versions, in its scope only', async () => {
      const created = await store().create(newAssistant(), A);
      await store().update(created.id, { name: 'two' }, A);
      expect(await store().delete(created.id, B)).toBe(false);
      expect(await store().delete(created.id, A)).toBe(true);
      expect(await store().get(created.id, A)).toBeNull();
      expect(await store().listVersions(created.id, A)).toEqual([]);
      expect(await store().delete(created.id, A)).toBe(false);
      const again = await store().create(newAssistant({ id: created.id }), A);
      expect(again.version).toBe(1);
      expect((await store().listVersions(created.id, A)).length).toBe(1);
    });
  });
}
