import type { Session } from '@cognition/contracts';
import { toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { collect, createApiTestBed, trpcErrorOf } from '../../testing/test-bed';
import { ALICE, contents, lastCallTexts, must, turn } from '../../testing/session-turns';

describe('issue 14: time travel over tRPC', () => {
  let bed: ApiTestBed;

  beforeEach(async () => {
    bed = await createApiTestBed();
  });
  afterEach(async () => {
    await bed.cleanup();
  });

  describe('time travel', () => {
    it('rewinds to after the first turn; the next message continues from there (the model sees the shortened history)', async () => {
      const session = await bed.as().sessions.create({});
      await turn(bed, session.id, 'first question', 'first answer');
      await turn(bed, session.id, 'second question', 'second answer');
      const listed = await bed.as().messages.list({ sessionId: session.id });
      const firstAnswer = listed.messages[1];
      expect(firstAnswer?.content).toBe('first answer');
      const before = await bed.as().sessions.get({ id: session.id });
      const history = await bed.as().sessions.history({ id: session.id });
      expect(history.checkpoints[0]).toMatchObject({
        messageCount: 4,
        lastMessagePreview: 'second answer',
      });

      const rewound = await bed.as().sessions.rewind({
        id: session.id,
        messageId: must(firstAnswer).id,
        expectedVersion: before.version,
      });
      expect(rewound.version).toBe(before.version + 1);
      expect(rewound.messageCount).toBe(2);
      expect(await contents(bed, session.id)).toEqual(['first question', 'first answer']);
      const after = await bed.as().sessions.history({ id: session.id });
      expect(after.checkpoints.length).toBe(history.checkpoints.length + 1);
      expect(after.checkpoints[0]).toMatchObject({
        messageCount: 2,
        lastMessagePreview: 'first answer',
      });

      await turn(bed, session.id, 'another second question', 'another second answer');
      expect(lastCallTexts(bed).slice(1)).toEqual([
        'first question',
        'first answer',
        'another second question',
      ]);
      expect(await contents(bed, session.id)).toEqual([
        'first question',
        'first answer',
        'another second question',
        'another second answer',
      ]);
      // Rewinding to a checkpoint works the same way (back to the original second turn).
      const original = must(history.checkpoints[0]).checkpointId;
      await bed.as().sessions.rewind({ id: session.id, checkpointId: original });
      expect(await contents(bed, session.id)).toEqual([
        'first question',
        'first answer',
        'second question',
        'second answer',
      ]);
    });

    it('refuses a rewind while a run is active (409)', async () => {
      const session = await bed.as().sessions.create({});
      await turn(bed, session.id, 'q', 'a');
      const first = must((await bed.as().messages.list({ sessionId: session.id })).messages[0]);
      bed.model.push({ text: ['x'], hang: true });
      const sent = await bed.as().messages.send({ sessionId: session.id, content: 'go' });
      const error = await trpcErrorOf(
        bed.as().sessions.rewind({ id: session.id, messageId: first.id }),
      );
      expect(toHttpError(error)).toMatchObject({ status: 409, body: { code: 'RUN_IN_PROGRESS' } });
      await bed.as().runs.abort({ sessionId: session.id });
      await collect(await bed.runs.events(session.id, {}, { runId: sent.run.id }));
    });

    it('forks from a message: a new session keeping the message ids; the source is unchanged', async () => {
      const session = await bed.as(ALICE).sessions.create({
        title: 'source',
        agentName: 'researcher',
        metadata: { team: 'red' },
        config: { model: 'fake-model' },
      });
      await turn(bed, session.id, 'q1', 'a1', ALICE);
      await turn(bed, session.id, 'q2', 'a2', ALICE);
      const rows = (await bed.as(ALICE).messages.list({ sessionId: session.id })).messages;
      const sourceBefore = await bed.as(ALICE).sessions.get({ id: session.id });
      const historyBefore = await bed.as(ALICE).sessions.history({ id: session.id });

      const fork: Session = await bed
        .as(ALICE)
        .sessions.fork({ id: session.id, messageId: must(rows[1]).id, title: 'branch' });
      expect(fork).toMatchObject({
        parentId: session.id,
        title: 'branch',
        agentName: 'researcher',
        metadata: { team: 'red' },
        config: { model: 'fake-model' },
        scopes: ALICE,
        messageCount: 2,
        version: 1,
        status: 'active',
      });
      const forked = (await bed.as(ALICE).messages.list({ sessionId: fork.id })).messages;
      expect(forked.map((m) => m.content)).toEqual(['q1', 'a1']);
      // Message ids are per session: the fork's messages keep theirs.
      expect(forked.map((m) => m.id)).toEqual([must(rows[0]).id, must(rows[1]).id]);
      expect(forked.every((m) => m.sessionId === fork.id)).toBe(true);
      expect(must(forked[1]).parentId).toBe(must(forked[0]).id);
      // The source: byte for byte the same session, messages and history.
      expect(await bed.as(ALICE).sessions.get({ id: session.id })).toEqual(sourceBefore);
      expect((await bed.as(ALICE).messages.list({ sessionId: session.id })).messages).toEqual(rows);
      expect(await bed.as(ALICE).sessions.history({ id: session.id })).toEqual(historyBefore);
      // The fork continues on its own.
      await turn(bed, fork.id, 'q2 on the branch', 'a2 on the branch', ALICE);
      expect(lastCallTexts(bed).slice(1)).toEqual(['q1', 'a1', 'q2 on the branch']);
      expect(await contents(bed, session.id, ALICE)).toEqual(['q1', 'a1', 'q2', 'a2']);
      // Latest state when no point is given, and a log entry on the new session.
      const latest = await bed.as(ALICE).sessions.fork({ id: session.id });
      expect(latest.messageCount).toBe(4);
      const log = await bed.as(ALICE).sessions.activity({ id: latest.id });
      expect(log.entries[0]).toMatchObject({ action: 'fork', detail: { forked_from: session.id } });
    });

    it('clear: the next turn starts empty while the history stays readable', async () => {
      const session = await bed.as().sessions.create({ metadata: { keep: 'me' } });
      await turn(bed, session.id, 'remember 42', 'ok');
      const cleared = await bed.as().sessions.clear({ id: session.id });
      expect(cleared).toMatchObject({ metadata: { keep: 'me' }, messageCount: 2, version: 2 });
      await turn(bed, session.id, 'what number?', 'no idea');
      expect(lastCallTexts(bed).slice(1)).toEqual(['what number?']);
      // The context view measures what the model works with: the thread after the clear mark.
      const view = await bed.as().sessions.context({ id: session.id });
      expect(view).toMatchObject({ thread_messages: 2, visible_messages: 2 });
      expect(await contents(bed, session.id)).toEqual([
        'remember 42',
        'ok',
        'what number?',
        'no idea',
      ]);
    });

    it('applies checkpoint retention (the session’s own wins); a rewind to a pruned checkpoint is 409', async () => {
      const session = await bed.as().sessions.create({ checkpointRetention: 'keep_latest' });
      await turn(bed, session.id, 'q1', 'a1');
      await turn(bed, session.id, 'q2', 'a2');
      const history = await bed.as().sessions.history({ id: session.id, limit: 500 });
      expect(history.checkpoints.length).toBeGreaterThan(2);
      const oldest = must(history.checkpoints[history.checkpoints.length - 1]).checkpointId;
      const deleted = await bed.sessions.pruneCheckpoints(session.id);
      expect(deleted).toBe(history.checkpoints.length - 1);
      const kept = await bed.as().sessions.history({ id: session.id });
      expect(kept.checkpoints.map((c) => c.checkpointId)).toEqual([
        must(history.checkpoints[0]).checkpointId,
      ]);
      expect(await contents(bed, session.id)).toEqual(['q1', 'a1', 'q2', 'a2']);
      const pruned = await trpcErrorOf(
        bed.as().sessions.rewind({ id: session.id, checkpointId: oldest }),
      );
      expect(toHttpError(pruned)).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
      expect(toHttpError(pruned).body.detail).toContain('pruned by checkpoint retention');
      // The server default (`all` here) leaves a session without its own policy alone.
      const plain = await bed.as().sessions.create({});
      await turn(bed, plain.id, 'q', 'a');
      expect(await bed.sessions.pruneCheckpoints(plain.id)).toBe(0);
    });

    it('rebuilds the projection from the checkpoint and reports the count', async () => {
      const session = await bed.as().sessions.create({});
      await turn(bed, session.id, 'q', 'a');
      expect(await bed.as().messages.rebuild({ sessionId: session.id })).toEqual({ messages: 2 });
    });
  });

  describe('messages order', () => {
    it('lists newest first with order desc, thread order by default on tRPC', async () => {
      const session = await bed.as().sessions.create({});
      await turn(bed, session.id, 'q1', 'a1');
      await turn(bed, session.id, 'q2', 'a2');
      const desc = await bed.as().messages.list({ sessionId: session.id, order: 'desc', limit: 3 });
      expect(desc.messages.map((m) => m.content)).toEqual(['a2', 'q2', 'a1']);
      expect(desc.hasMore).toBe(true);
      expect(await contents(bed, session.id)).toEqual(['q1', 'a1', 'q2', 'a2']);
    });
  });
});
