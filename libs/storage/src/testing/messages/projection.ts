import type { Message } from '@cognition/contracts';
import type { BaseMessage } from '@langchain/core/messages';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { SuiteContext } from '../context';
import {
  expectStorageError,
  nextCheckpointId,
  putMessagesCheckpoint,
  sleep,
  uid,
  withoutCreatedAt,
} from '../helpers';
import { expectPagesMatchThread, TRICKY_TEXT } from './messages';

/** A realistic turn: question, tool-calling answer with usage, tool result, final answer. */
function toolTurn(): {
  messages: BaseMessage[];
  ids: { human: string; ai: string; tool: string; final: string };
} {
  const ids = { human: uid('h'), ai: uid('a'), tool: uid('t'), final: uid('f') };
  return {
    ids,
    messages: [
      new HumanMessage({ id: ids.human, content: 'What is the weather in Paris?' }),
      new AIMessage({
        id: ids.ai,
        content: '',
        tool_calls: [
          { id: 'call_weather', name: 'get_weather', args: { city: 'Paris' }, type: 'tool_call' },
        ],
        usage_metadata: { input_tokens: 12, output_tokens: 7, total_tokens: 19 },
        response_metadata: { model_name: 'gpt-4o-mini' },
      }),
      new ToolMessage({ id: ids.tool, content: '18°C, cloudy', tool_call_id: 'call_weather' }),
      new AIMessage({
        id: ids.final,
        content: 'It is 18°C and cloudy in Paris.',
        usage_metadata: { input_tokens: 30, output_tokens: 9, total_tokens: 39 },
        response_metadata: { model_name: 'gpt-4o-mini' },
      }),
    ],
  };
}

export function projectionTests(ctx: SuiteContext): void {
  describe('message projection', () => {
    const rows = (sessionId: string): Promise<Message[]> =>
      ctx.backend.messages.listAll(sessionId, {});
    const count = async (sessionId: string): Promise<number | undefined> =>
      (await ctx.backend.sessions.get(sessionId, {}))?.messageCount;

    it('projects a checkpoint into message rows by the time put resolves', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { messages, ids } = toolTurn();
      await putMessagesCheckpoint(ctx.backend, session.threadId, messages);
      const projected = await rows(session.id);
      expect(projected.map((m) => m.id)).toEqual([ids.human, ids.ai, ids.tool, ids.final]);
      expect(projected.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      expect(projected[0]).toMatchObject({
        content: 'What is the weather in Paris?',
        parentId: null,
        tokenCount: null,
      });
      expect(projected[1]).toMatchObject({
        content: '',
        toolCalls: [{ id: 'call_weather', name: 'get_weather', args: { city: 'Paris' } }],
        tokenCount: 7,
        modelUsed: 'gpt-4o-mini',
        parentId: ids.human,
        toolCallId: null,
      });
      expect(projected[2]).toMatchObject({
        content: '18°C, cloudy',
        toolCallId: 'call_weather',
        parentId: ids.human,
      });
      expect(projected[3]).toMatchObject({
        tokenCount: 9,
        modelUsed: 'gpt-4o-mini',
        parentId: ids.human,
      });
      expect(await count(session.id)).toBe(4);
      expect(await ctx.backend.messages.get(session.id, ids.ai, {})).toEqual(projected[1]);
      const page = await ctx.backend.messages.page(session.id, { limit: 2, offset: 2 }, {});
      expect(page).toEqual({ messages: projected.slice(2), total: 4, hasMore: false });
    });

    it('stores NUL from a model or a tool as U+FFFD, the checkpoint keeping the exact text', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const ids = { human: uid('h'), ai: uid('a'), tool: uid('t') };
      const messages = [
        new HumanMessage({ id: ids.human, content: 'print it' }),
        new AIMessage({
          id: ids.ai,
          content: 'a\u0000b',
          tool_calls: [
            { id: 'call\u00001', name: 'execute', args: { c: 'x\u0000' }, type: 'tool_call' },
          ],
          response_metadata: { model_name: 'm\u0000' },
        }),
        new ToolMessage({ id: ids.tool, content: 'x\u0000y', tool_call_id: 'call\u00001' }),
      ];
      const checkpoint = await putMessagesCheckpoint(ctx.backend, session.threadId, messages);
      const projected = await rows(session.id);
      expect(projected.map((m) => m.content)).toEqual(['print it', 'a\uFFFDb', 'x\uFFFDy']);
      expect(projected[1]).toMatchObject({
        modelUsed: 'm\uFFFD',
        toolCalls: [{ id: 'call\u00001', name: 'execute', args: { c: 'x\u0000' } }],
      });
      expect(projected[2]?.toolCallId).toBe('call\uFFFD1');
      const stored = await ctx.backend.checkpointer.getTuple({
        configurable: { thread_id: session.threadId, checkpoint_ns: '', checkpoint_id: checkpoint },
      });
      const kept =
        (stored?.checkpoint.channel_values['messages'] as BaseMessage[] | undefined) ?? [];
      expect(kept.map((m) => m.content)).toEqual(['print it', 'a\u0000b', 'x\u0000y']);
    });

    it('moves the session updatedAt when a checkpoint adds messages, not when it adds none', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      await sleep(5);
      const { messages } = toolTurn();
      await putMessagesCheckpoint(ctx.backend, session.threadId, messages);
      const afterTurn = await ctx.backend.sessions.get(session.id, {});
      expect(afterTurn?.updatedAt.getTime()).toBeGreaterThan(session.updatedAt.getTime());
      expect(afterTurn?.version).toBe(session.version);
      await sleep(5);
      await putMessagesCheckpoint(ctx.backend, session.threadId, messages);
      const again = await ctx.backend.sessions.get(session.id, {});
      expect(again?.updatedAt.getTime()).toBe(afterTurn?.updatedAt.getTime());
    });

    it('leaves threads without a session and subgraph namespaces out of the projection', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      await putMessagesCheckpoint(ctx.backend, uid('orphan-thread'), [
        new HumanMessage({ id: uid('h'), content: 'x' }),
      ]);
      await putMessagesCheckpoint(
        ctx.backend,
        session.threadId,
        [new HumanMessage({ id: uid('h'), content: 'sub' })],
        {
          namespace: 'subgraph',
        },
      );
      expect(await rows(session.id)).toEqual([]);
      expect(await count(session.id)).toBe(0);
    });

    it('keeps a pending input row and updates it in place when a checkpoint includes it', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const turn1 = [
        new HumanMessage({ id: uid('h'), content: 'hi' }),
        new AIMessage({ id: uid('a'), content: 'hello' }),
      ];
      await putMessagesCheckpoint(ctx.backend, session.threadId, turn1);
      const pendingId = uid('pending');
      const pending = await ctx.backend.messages.create({
        id: pendingId,
        sessionId: session.id,
        role: 'user',
        content: 'second question',
        metadata: { via: 'api' },
      });
      expect((await rows(session.id)).map((m) => m.id)).toEqual([
        turn1[0]?.id,
        turn1[1]?.id,
        pendingId,
      ]);
      // The input checkpoint of the next turn does not contain the new message yet.
      await putMessagesCheckpoint(ctx.backend, session.threadId, turn1);
      expect((await rows(session.id)).map((m) => m.id)).toEqual([
        turn1[0]?.id,
        turn1[1]?.id,
        pendingId,
      ]);
      expect(await count(session.id)).toBe(3);
      const answerId = uid('a');
      await putMessagesCheckpoint(ctx.backend, session.threadId, [
        ...turn1,
        new HumanMessage({
          id: pendingId,
          content: 'second question',
          additional_kwargs: { cognition: { metadata: { via: 'api' } } },
        }),
        new AIMessage({ id: answerId, content: 'second answer' }),
      ]);
      const after = await rows(session.id);
      expect(after.map((m) => m.id)).toEqual([turn1[0]?.id, turn1[1]?.id, pendingId, answerId]);
      const row = after[2];
      expect(row).toMatchObject({
        content: 'second question',
        metadata: { via: 'api' },
        role: 'user',
      });
      expect(row?.createdAt.getTime()).toBe(pending.createdAt.getTime());
      expect(after[3]?.parentId).toBe(pendingId);
      expect(await count(session.id)).toBe(4);
    });

    it('drops rows a newer checkpoint no longer contains and rewrites changed ones', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { messages, ids } = toolTurn();
      await putMessagesCheckpoint(ctx.backend, session.threadId, messages);
      const summary = new HumanMessage({ id: ids.human, content: 'Summarised: weather in Paris?' });
      await putMessagesCheckpoint(ctx.backend, session.threadId, [
        summary,
        messages[3] as BaseMessage,
      ]);
      const after = await rows(session.id);
      expect(after.map((m) => m.id)).toEqual([ids.human, ids.final]);
      expect(after[0]?.content).toBe('Summarised: weather in Paris?');
      expect(await count(session.id)).toBe(2);
      expect(await ctx.backend.messages.get(session.id, ids.ai, {})).toBeNull();
    });

    it('keeps pages equal to the thread through rewrites that drop, reorder and insert rows', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const [h1, a1, h2, a2] = [
        new HumanMessage({ id: uid('h'), content: 'one' }),
        new AIMessage({ id: uid('a'), content: 'two' }),
        new HumanMessage({ id: uid('h'), content: 'three' }),
        new AIMessage({ id: uid('a'), content: 'four' }),
      ];
      await putMessagesCheckpoint(ctx.backend, session.threadId, [h1, a1, h2, a2]);
      const pending = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'pending',
      });
      await expectPagesMatchThread(ctx.backend, session.id, [
        h1.id,
        a1.id,
        h2.id,
        a2.id,
        pending.id,
      ]);
      // a1 removed, a2 and h2 trade places, a new row in between; the pending input stays last.
      const inserted = new AIMessage({ id: uid('x'), content: 'inserted' });
      await putMessagesCheckpoint(ctx.backend, session.threadId, [h1, a2, inserted, h2]);
      await expectPagesMatchThread(ctx.backend, session.id, [
        h1.id,
        a2.id,
        inserted.id,
        h2.id,
        pending.id,
      ]);
      // The pending input moves to the front; everything but h1 is dropped.
      await putMessagesCheckpoint(ctx.backend, session.threadId, [
        new HumanMessage({ id: pending.id, content: 'pending' }),
        h1,
      ]);
      await expectPagesMatchThread(ctx.backend, session.id, [pending.id, h1.id]);
      expect(await count(session.id)).toBe(2);
      const appended = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'after the rewrite',
      });
      await expectPagesMatchThread(ctx.backend, session.id, [pending.id, h1.id, appended.id]);
    });

    it('projects the latest checkpoint even when an older one is written afterwards', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const older = [new HumanMessage({ id: uid('h'), content: 'old' })];
      const newer = [...older, new AIMessage({ id: uid('a'), content: 'new' })];
      const [first, second, third] = [nextCheckpointId(), nextCheckpointId(), nextCheckpointId()];
      await putMessagesCheckpoint(ctx.backend, session.threadId, older, { checkpointId: first });
      await putMessagesCheckpoint(ctx.backend, session.threadId, newer, { checkpointId: third });
      // A late write of a checkpoint older than the latest one (e.g. a concurrent fork).
      await putMessagesCheckpoint(ctx.backend, session.threadId, older, { checkpointId: second });
      expect((await rows(session.id)).map((m) => m.content)).toEqual(['old', 'new']);
      expect(await ctx.backend.rebuildMessageProjection(session.id)).toEqual({ messages: 2 });
      expect((await rows(session.id)).map((m) => m.content)).toEqual(['old', 'new']);
    });

    it('round-trips a 1 MB answer and non-ASCII text through a checkpoint', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const big = '字'.repeat(512 * 1024) + 'y'.repeat(512 * 1024);
      const ids = { h: uid('h'), a: uid('a') };
      await putMessagesCheckpoint(ctx.backend, session.threadId, [
        new HumanMessage({ id: ids.h, content: TRICKY_TEXT }),
        new AIMessage({ id: ids.a, content: big }),
      ]);
      const [human, ai] = await rows(session.id);
      expect(human?.content).toBe(TRICKY_TEXT);
      expect(ai?.content.length).toBe(big.length);
      expect(ai?.content === big).toBe(true);
    });

    it('rebuilds exactly the projection after rows were deleted or altered, keeping pending inputs', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { messages, ids } = toolTurn();
      await putMessagesCheckpoint(ctx.backend, session.threadId, messages);
      const pending = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'queued',
      });
      const before = (await rows(session.id)).map(withoutCreatedAt);
      await ctx.tamper.deleteMessageRow(session.id, ids.tool);
      await ctx.tamper.setMessageContent(session.id, ids.final, 'tampered');
      expect((await rows(session.id)).map(withoutCreatedAt)).not.toEqual(before);
      expect(await ctx.backend.rebuildMessageProjection(session.id)).toEqual({ messages: 5 });
      expect((await rows(session.id)).map(withoutCreatedAt)).toEqual(before);
      expect(await count(session.id)).toBe(5);
      expect((await rows(session.id))[4]?.id).toBe(pending.id);
    });

    it('restores rows removed by deleteBySession from the checkpoint on rebuild', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { messages } = toolTurn();
      await putMessagesCheckpoint(ctx.backend, session.threadId, messages);
      const before = (await rows(session.id)).map(withoutCreatedAt);
      await ctx.backend.messages.deleteBySession(session.id);
      expect(await count(session.id)).toBe(0);
      expect(await ctx.backend.rebuildMessageProjection(session.id)).toEqual({ messages: 4 });
      expect((await rows(session.id)).map(withoutCreatedAt)).toEqual(before);
      expect(await count(session.id)).toBe(4);
    });

    it('rebuilds a session without checkpoints to its pending inputs and rejects unknown sessions', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'only input',
      });
      expect(await ctx.backend.rebuildMessageProjection(session.id)).toEqual({ messages: 1 });
      expect((await rows(session.id)).map((m) => m.content)).toEqual(['only input']);
      await expectStorageError(
        ctx.backend.rebuildMessageProjection(uid('missing')),
        'SESSION_NOT_FOUND',
      );
    });

    it('repairs a drifted projection on initialize()', async () => {
      const drifted = await ctx.backend.sessions.create({}, {});
      const healthy = await ctx.backend.sessions.create({}, {});
      const { messages } = toolTurn();
      const firstId = await putMessagesCheckpoint(
        ctx.backend,
        drifted.threadId,
        messages.slice(0, 2),
      );
      await putMessagesCheckpoint(ctx.backend, drifted.threadId, messages);
      await putMessagesCheckpoint(ctx.backend, healthy.threadId, [
        new HumanMessage({ id: uid('h'), content: 'fine' }),
      ]);
      const expected = (await rows(drifted.id)).map(withoutCreatedAt);
      const healthyBefore = await rows(healthy.id);
      // The state a crash between the second checkpoint write and its projection leaves behind.
      for (const message of messages.slice(2))
        await ctx.tamper.deleteMessageRow(drifted.id, message.id as string);
      await ctx.backend.sessions.updateMessageCount(drifted.id, -2);
      await ctx.tamper.setProjectedCheckpointId(drifted.id, firstId);
      expect(await rows(drifted.id)).toHaveLength(2);
      await ctx.backend.initialize();
      expect((await rows(drifted.id)).map(withoutCreatedAt)).toEqual(expected);
      expect(await count(drifted.id)).toBe(4);
      expect(await rows(healthy.id)).toEqual(healthyBefore);
    });

    it('repairs the thread order on initialize() after a row was deleted behind the backend', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const ids: string[] = [];
      for (let i = 0; i < 4; i += 1) {
        ids.push(
          (
            await ctx.backend.messages.create({
              sessionId: session.id,
              role: 'user',
              content: `m${i}`,
            })
          ).id,
        );
      }
      await ctx.tamper.deleteMessageRow(session.id, ids[1] as string);
      // The count agrees with the rows again; only the positions tell the deletion.
      await ctx.backend.sessions.updateMessageCount(session.id, -1);
      await ctx.backend.initialize();
      await expectPagesMatchThread(ctx.backend, session.id, [ids[0], ids[2], ids[3]]);
      expect(await count(session.id)).toBe(3);
    });

    it('repairs a session whose projection was never recorded on initialize()', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { messages } = toolTurn();
      await putMessagesCheckpoint(ctx.backend, session.threadId, messages);
      const expected = (await rows(session.id)).map(withoutCreatedAt);
      await ctx.backend.messages.deleteBySession(session.id);
      await ctx.tamper.setProjectedCheckpointId(session.id, null);
      await ctx.backend.initialize();
      expect((await rows(session.id)).map(withoutCreatedAt)).toEqual(expected);
      expect(await count(session.id)).toBe(4);
    });
  });
}
