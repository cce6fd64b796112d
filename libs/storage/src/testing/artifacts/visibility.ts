import type { ArtifactVisibility } from '@cognition/contracts';
import type { ArtifactAccess } from '../../domains/artifacts';
import type { SuiteContext } from '../context';

const SCOPE = { tenant: 'a', user: 'alice' };
const OTHER = { tenant: 'b', user: 'alice' };
const VISIBILITIES: ArtifactVisibility[] = ['private', 'run', 'public'];

/** The visibility × scope matrix, scratch clean-up and the cascade of a session delete. */
export function artifactVisibilityTests(ctx: SuiteContext): void {
  async function world() {
    const s1 = await ctx.backend.sessions.create({}, SCOPE);
    const s2 = await ctx.backend.sessions.create({}, SCOPE);
    const { run: r1 } = await ctx.backend.runs.create({ sessionId: s1.id });
    await ctx.backend.runs.update(r1.id, { status: 'completed' });
    const { run: r2 } = await ctx.backend.runs.create({ sessionId: s1.id });
    const ids: Record<ArtifactVisibility, string> = { private: '', run: '', public: '' };
    for (const visibility of VISIBILITIES) {
      const a = await ctx.backend.artifacts.create(
        { name: visibility, visibility, content: visibility, sessionId: s1.id, runId: r1.id },
        { scope: SCOPE, agent: { sessionId: s1.id, runId: r1.id } },
      );
      ids[visibility] = a.id;
    }
    return { s1, s2, r1, r2, ids };
  }

  describe('artifact visibility', () => {
    it('shows each visibility to exactly the callers the matrix allows', async () => {
      const { s1, s2, r1, r2, ids } = await world();
      const viewers: [string, ArtifactAccess, ArtifactVisibility[]][] = [
        [
          'the making run',
          { scope: SCOPE, agent: { sessionId: s1.id, runId: r1.id } },
          VISIBILITIES,
        ],
        [
          'a later run of the session',
          { scope: SCOPE, agent: { sessionId: s1.id, runId: r2.id } },
          ['private', 'public'],
        ],
        [
          'another session of the scope',
          { scope: SCOPE, agent: { sessionId: s2.id, runId: 'r-x' } },
          ['public'],
        ],
        ['an API client of the scope', { scope: SCOPE }, VISIBILITIES],
        ['an API client of a wider scope key set', { scope: { tenant: 'a' } }, VISIBILITIES],
        ['an API client of another scope', { scope: OTHER }, []],
        [
          'an agent of another scope',
          { scope: OTHER, agent: { sessionId: s1.id, runId: r1.id } },
          [],
        ],
      ];
      for (const [who, access, sees] of viewers) {
        const listed = (await ctx.backend.artifacts.list({}, access)).artifacts.map((a) => a.name);
        expect({ who, listed: listed.sort() }).toEqual({ who, listed: [...sees].sort() });
        for (const visibility of VISIBILITIES) {
          const id = ids[visibility];
          const visible = sees.includes(visibility);
          expect({
            who,
            visibility,
            get: (await ctx.backend.artifacts.get(id, access)) !== null,
          }).toEqual({ who, visibility, get: visible });
          expect({
            who,
            visibility,
            versions: (await ctx.backend.artifacts.listVersions(id, access)) !== null,
          }).toEqual({ who, visibility, versions: visible });
        }
      }
      const outsider = { scope: OTHER };
      for (const visibility of VISIBILITIES) {
        const id = ids[visibility];
        await expect(
          ctx.backend.artifacts.update(id, { content: 'x' }, outsider),
        ).rejects.toMatchObject({ code: 'NOT_FOUND' });
        expect(await ctx.backend.artifacts.delete(id, outsider)).toBe(false);
        expect((await ctx.backend.artifacts.get(id, { scope: SCOPE }))?.version).toBe(1);
      }
      expect((await ctx.backend.artifacts.get(ids.run, { scope: SCOPE }))?.createdBy).toBe(
        `run:${r1.id}`,
      );
    });

    it('refuses a session or run of another scope or session', async () => {
      const { s1, s2, r1 } = await world();
      await expect(
        ctx.backend.artifacts.create(
          { name: 'x', content: 'x', sessionId: s1.id },
          { scope: OTHER },
        ),
      ).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
      await expect(
        ctx.backend.artifacts.create(
          { name: 'x', visibility: 'run', content: 'x', sessionId: s2.id, runId: r1.id },
          { scope: SCOPE },
        ),
      ).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    });

    it('deletes the scratch artifacts of a run and no others', async () => {
      const { s1, r1, r2 } = await world();
      const make = (name: string, runId: string, type: 'scratch' | 'artifact') =>
        ctx.backend.artifacts.create(
          { name, type, visibility: 'run', content: name, sessionId: s1.id, runId },
          { scope: SCOPE },
        );
      await make('s1', r1.id, 'scratch');
      await make('s2', r1.id, 'scratch');
      await make('keep-type', r1.id, 'artifact');
      await make('keep-run', r2.id, 'scratch');
      expect(await ctx.backend.artifacts.deleteScratch(r1.id)).toBe(2);
      const left = (await ctx.backend.artifacts.list({ type: 'scratch' }, { scope: SCOPE }))
        .artifacts;
      expect(left.map((a) => a.name)).toEqual(['keep-run']);
    });

    it('deleting a session deletes its private and run artifacts and keeps public ones', async () => {
      const { s1, s2, ids } = await world();
      const elsewhere = await ctx.backend.artifacts.create(
        { name: 'other-session', content: 'x', sessionId: s2.id },
        { scope: SCOPE },
      );
      expect(await ctx.backend.sessions.delete(s1.id, SCOPE)).toBe(true);
      const api = { scope: SCOPE };
      expect(await ctx.backend.artifacts.get(ids.private, api)).toBeNull();
      expect(await ctx.backend.artifacts.get(ids.run, api)).toBeNull();
      expect(await ctx.backend.artifacts.listVersions(ids.run, api)).toBeNull();
      expect((await ctx.backend.artifacts.get(ids.public, api))?.content).toBe('public');
      expect(await ctx.backend.artifacts.get(elsewhere.id, api)).not.toBeNull();
    });
  });
}
