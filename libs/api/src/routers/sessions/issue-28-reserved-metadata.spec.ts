import { STATELESS_RUN_METADATA_KEY } from '@cognition/contracts';
import { toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { createApiTestBed, trpcErrorOf } from '../../testing/test-bed';

/**
 * The LangGraph API marks a stateless run's thread in its session metadata and deletes such a
 * session once its runs ended (issue 28): the mark is the server's alone, so every way a caller
 * writes session metadata refuses it with a 422 naming it, and stores nothing.
 */
describe('issue 28: the stateless-run mark is not writable over the session API', () => {
  let bed: ApiTestBed;
  beforeEach(async () => {
    bed = await createApiTestBed();
  });
  afterEach(async () => {
    await bed.cleanup();
  });

  it('refuses it in create, update and setMetadata, naming the field', async () => {
    const session = await bed.as().sessions.create({ metadata: { team: 'red' } });
    const mark = { [STATELESS_RUN_METADATA_KEY]: 'delete' };
    const cases: [Promise<unknown>, string][] = [
      [bed.as().sessions.create({ metadata: mark }), `metadata.${STATELESS_RUN_METADATA_KEY}`],
      [
        bed.as().sessions.update({ id: session.id, metadata: { team: 'blue', ...mark } }),
        `metadata.${STATELESS_RUN_METADATA_KEY}`,
      ],
      [
        bed.as().sessions.setMetadata({
          id: session.id,
          key: STATELESS_RUN_METADATA_KEY,
          value: 'delete',
        }),
        'key',
      ],
    ];
    for (const [attempt, path] of cases) {
      const { status, body } = toHttpError(await trpcErrorOf(attempt));
      expect({ path, status }).toEqual({ path, status: 422 });
      expect(body.errors?.map((issue) => issue.path)).toContain(path);
    }
    expect((await bed.as().sessions.get({ id: session.id })).metadata).toEqual({ team: 'red' });
    // Other `langgraph.` keys are the caller's to write.
    const other = await bed.as().sessions.create({ metadata: { 'langgraph.mine': 'x' } });
    expect(other.metadata).toEqual({ 'langgraph.mine': 'x' });
  });
});
