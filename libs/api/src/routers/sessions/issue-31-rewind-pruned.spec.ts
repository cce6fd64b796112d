import { toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { createApiTestBed, trpcErrorOf } from '../../testing/test-bed';
import { contents, lastCallTexts, must, turn } from '../../testing/session-turns';

/**
 * Issue 31: after `keep_latest` pruned a session's history to its head, a rewind (or fork) to an
 * earlier answer answered 200 and changed nothing — the head holds every message, so "the oldest
 * kept checkpoint holding it" was the head. The point right after that answer is gone: 409.
 */
describe('issue 31: rewind and fork by message to a pruned point', () => {
  let bed: ApiTestBed;

  beforeEach(async () => {
    bed = await createApiTestBed();
  });
  afterEach(async () => {
    await bed.cleanup();
  });

  async function prunedSession() {
    const session = await bed.as().sessions.create({ checkpointRetention: 'keep_latest' });
    await turn(bed, session.id, 'q1', 'a1');
    await turn(bed, session.id, 'q2', 'a2');
    await turn(bed, session.id, 'q3', 'a3');
    expect(await bed.sessions.pruneCheckpoints(session.id)).toBeGreaterThan(0);
    const listed = await bed.as().messages.list({ sessionId: session.id });
    return { session, messages: listed.messages };
  }

  it('answers 409 naming retention for a rewind to the first answer, and keeps all six messages', async () => {
    const { session, messages } = await prunedSession();
    const firstAnswer = must(messages[1]);
    expect(firstAnswer.content).toBe('a1');
    const refused = await trpcErrorOf(
      bed.as().sessions.rewind({ id: session.id, messageId: firstAnswer.id }),
    );
    expect(toHttpError(refused)).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    expect(toHttpError(refused).body.detail).toContain('pruned by checkpoint retention');
    expect(await contents(bed, session.id)).toEqual(['q1', 'a1', 'q2', 'a2', 'q3', 'a3']);
    // The next turn still sees the whole history.
    await turn(bed, session.id, 'q4', 'a4');
    expect(lastCallTexts(bed).slice(1)).toEqual(['q1', 'a1', 'q2', 'a2', 'q3', 'a3', 'q4']);
  });

  it('answers 409 for a fork to a pruned point, and creates no session', async () => {
    const { session, messages } = await prunedSession();
    const before = await bed.as().sessions.list({});
    const refused = await trpcErrorOf(
      bed.as().sessions.fork({ id: session.id, messageId: must(messages[3]).id }),
    );
    expect(toHttpError(refused)).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    expect((await bed.as().sessions.list({})).total).toBe(before.total);
  });

  it('still rewinds to the last answer, which the kept head is right after', async () => {
    const { session, messages } = await prunedSession();
    const rewound = await bed.as().sessions.rewind({
      id: session.id,
      messageId: must(messages[5]).id,
    });
    expect(rewound.messageCount).toBe(6);
  });
});
