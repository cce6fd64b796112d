import { createHash, randomBytes } from 'node:crypto';
import type { ArtifactVisibility } from '@cognition/contracts';
import { ARTIFACT_MAX_BYTES_DEFAULT } from '@cognition/contracts';
import type { ArtifactAccess } from '../../domains/artifacts';
import type { SuiteContext } from '../context';
import { expectStorageError, expectValidationError, uid } from '../helpers';
import { artifactVisibilityTests } from './visibility';

const SCOPE = { tenant: 'a' };
const API: ArtifactAccess = { scope: SCOPE };

/** The artifact store: versions, concurrency, content exactness, limits, validation, cascade. */
export function artifactTests(ctx: SuiteContext): void {
  describe('artifacts', () => {
    const session = () => ctx.backend.sessions.create({}, SCOPE);

    it('creates version 1 and reads back the content with its size and sha256', async () => {
      const s = await session();
      const created = await ctx.backend.artifacts.create(
        { name: 'notes.md', content: 'héllo', sessionId: s.id, metadata: { k: 'v' } },
        API,
      );
      expect(created).toMatchObject({
        name: 'notes.md',
        type: 'artifact',
        visibility: 'private',
        version: 1,
        size: Buffer.byteLength('héllo'),
        sha256: createHash('sha256').update('héllo').digest('hex'),
        contentType: 'text/plain',
        encoding: 'utf8',
        sessionId: s.id,
        runId: null,
        scopes: SCOPE,
        metadata: { k: 'v' },
        createdBy: 'api',
        content: 'héllo',
      });
      const read = await ctx.backend.artifacts.get(created.id, API);
      expect(read).toEqual(created);
    });

    it('versions content changes only, and keeps every version readable', async () => {
      const a = await ctx.backend.artifacts.create(
        { name: 'doc', visibility: 'public', content: 'one' },
        API,
      );
      const metaOnly = await ctx.backend.artifacts.update(a.id, { metadata: { m: '1' } }, API);
      expect(metaOnly.version).toBe(1);
      expect(metaOnly.metadata).toEqual({ m: '1' });
      const same = await ctx.backend.artifacts.update(a.id, { content: 'one' }, API);
      expect(same.version).toBe(1);
      const two = await ctx.backend.artifacts.update(a.id, { content: 'two' }, API);
      expect(two.version).toBe(2);
      const three = await ctx.backend.artifacts.update(
        a.id,
        { content: '# three', contentType: 'text/markdown', expectedVersion: 2 },
        API,
      );
      expect(three).toMatchObject({
        version: 3,
        contentType: 'text/markdown',
        metadata: { m: '1' },
      });

      const versions = await ctx.backend.artifacts.listVersions(a.id, API);
      expect(versions?.map((v) => [v.version, v.size, v.contentType])).toEqual([
        [1, 3, 'text/plain'],
        [2, 3, 'text/plain'],
        [3, 7, 'text/markdown'],
      ]);
      expect((await ctx.backend.artifacts.get(a.id, API, 1))?.content).toBe('one');
      expect(await ctx.backend.artifacts.get(a.id, API, 2)).toMatchObject({
        content: 'two',
        version: 2,
      });
      expect((await ctx.backend.artifacts.get(a.id, API))?.content).toBe('# three');
      expect(await ctx.backend.artifacts.get(a.id, API, 4)).toBeNull();
    });

    it('refuses a stale expected version, and of concurrent writers exactly one wins', async () => {
      const a = await ctx.backend.artifacts.create(
        { name: 'race', visibility: 'public', content: 'v1' },
        API,
      );
      await expectStorageError(
        ctx.backend.artifacts.update(a.id, { content: 'x', expectedVersion: 2 }, API),
        'VERSION_CONFLICT',
      );
      const writers = Array.from({ length: 8 }, (_, i) =>
        ctx.backend.artifacts.update(a.id, { content: `w${i}`, expectedVersion: 1 }, API),
      );
      const results = await Promise.allSettled(writers);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(7);
      for (const failure of lost) {
        expect((failure.reason as { code?: string }).code).toBe('VERSION_CONFLICT');
      }
      expect((await ctx.backend.artifacts.listVersions(a.id, API))?.map((v) => v.version)).toEqual([
        1, 2,
      ]);
    });

    it('round-trips binary content exactly', async () => {
      const bytes = Buffer.concat([Buffer.from([0, 255, 0x80, 0x0a, 0x0d]), randomBytes(4096)]);
      const a = await ctx.backend.artifacts.create(
        {
          name: 'blob.bin',
          visibility: 'public',
          encoding: 'base64',
          content: bytes.toString('base64'),
        },
        API,
      );
      expect(a).toMatchObject({
        size: bytes.length,
        contentType: 'application/octet-stream',
        sha256: createHash('sha256').update(bytes).digest('hex'),
      });
      const read = await ctx.backend.artifacts.get(a.id, API);
      expect(read?.encoding).toBe('base64');
      expect(Buffer.from(read?.content ?? '', 'base64').equals(bytes)).toBe(true);
    });

    it('accepts content at the size limit and refuses one byte more', async () => {
      const limit = ARTIFACT_MAX_BYTES_DEFAULT;
      await expectStorageError(
        ctx.backend.artifacts.create(
          { name: 'big', visibility: 'public', content: 'x'.repeat(limit + 1) },
          API,
        ),
        'PAYLOAD_TOO_LARGE',
      );
      const a = await ctx.backend.artifacts.create(
        { name: 'big', visibility: 'public', content: 'x'.repeat(limit) },
        API,
      );
      expect(a.size).toBe(limit);
      await expectStorageError(
        ctx.backend.artifacts.update(a.id, { content: 'y'.repeat(limit + 1) }, API),
        'PAYLOAD_TOO_LARGE',
      );
      expect((await ctx.backend.artifacts.get(a.id, API))?.version).toBe(1);
    });

    it('keeps names unique per scope and session, and per scope when public', async () => {
      const [s1, s2] = [await session(), await session()];
      await ctx.backend.artifacts.create({ name: 'n', content: 'a', sessionId: s1.id }, API);
      await ctx.backend.artifacts.create({ name: 'n', content: 'b', sessionId: s2.id }, API);
      await expectStorageError(
        ctx.backend.artifacts.create({ name: 'n', content: 'c', sessionId: s1.id }, API),
        'CONFLICT',
      );
      await ctx.backend.artifacts.create({ name: 'n', visibility: 'public', content: 'p' }, API);
      await expectStorageError(
        ctx.backend.artifacts.create(
          { name: 'n', visibility: 'public', content: 'q', sessionId: s2.id },
          API,
        ),
        'CONFLICT',
      );
      await ctx.backend.artifacts.create(
        { name: 'n', visibility: 'public', content: 'other tenant' },
        { scope: { tenant: 'b' } },
      );
    });

    it('names the field of bad input and stores nothing', async () => {
      await expectValidationError(
        ctx.backend.artifacts.create({ name: '', content: 'x', visibility: 'public' }, API),
        'name',
      );
      await expectValidationError(
        ctx.backend.artifacts.create({ name: 'n', content: 'x' }, API),
        'sessionId',
      );
      await expectValidationError(
        ctx.backend.artifacts.create(
          { name: 'n', content: '%%%', encoding: 'base64', visibility: 'public' },
          API,
        ),
        'content',
      );
      await expectValidationError(
        ctx.backend.artifacts.create(
          { name: 'n', content: 'x', visibility: 'public', type: 'nope' as never },
          API,
        ),
        'type',
      );
      expect((await ctx.backend.artifacts.list({}, API)).total).toBe(0);
      await expectStorageError(
        ctx.backend.artifacts.create({ name: 'n', content: 'x', sessionId: uid('missing') }, API),
        'SESSION_NOT_FOUND',
      );
      await expectStorageError(
        ctx.backend.artifacts.update(uid('missing'), { content: 'x' }, API),
        'NOT_FOUND',
      );
    });

    it('lists with filters and pages, newest first', async () => {
      const s = await session();
      const make = (name: string, visibility: ArtifactVisibility, extra = {}) =>
        ctx.backend.artifacts.create(
          { name, visibility, content: name, sessionId: s.id, ...extra },
          API,
        );
      await make('a', 'private', { type: 'memory', metadata: { tag: 'x' } });
      await make('b', 'public', { type: 'policy' });
      await make('c', 'public', { metadata: { tag: 'x' } });
      const all = await ctx.backend.artifacts.list({}, API);
      expect(all.artifacts.map((a) => a.name)).toEqual(['c', 'b', 'a']);
      expect(all.total).toBe(3);
      const page = await ctx.backend.artifacts.list({ limit: 1, offset: 1 }, API);
      expect(page.artifacts.map((a) => a.name)).toEqual(['b']);
      expect(page.total).toBe(3);
      const names = async (query: object) =>
        (await ctx.backend.artifacts.list(query, API)).artifacts.map((a) => a.name);
      expect(await names({ type: 'memory' })).toEqual(['a']);
      expect(await names({ visibility: 'public' })).toEqual(['c', 'b']);
      expect(await names({ metadata: { tag: 'x' } })).toEqual(['c', 'a']);
      expect(await names({ name: 'b' })).toEqual(['b']);
      expect(await names({ sessionId: s.id, type: 'artifact' })).toEqual(['c']);
      expect(await names({ sessionId: uid('other') })).toEqual([]);
    });

    artifactVisibilityTests(ctx);
  });
}
