import { MESSAGE_CONTENT_MAX, PAGE_LIMIT_MAX } from '@cognition/contracts';
import type { StorageBackend } from '../../backend';
import type { SuiteContext } from '../context';
import {
  expectStorageError,
  expectStorageErrorValue,
  expectValidationError,
  sleep,
  uid,
} from '../helpers';

/** Text that trips naive encodings: emoji with ZWJ, CJK, RTL, combining marks, astral planes. */
export const TRICKY_TEXT =
  'Family 👩‍👩‍👧‍👦 flag 🇯🇵 漢字かなカナ 한국어 مرحبا بالعالم שלום עולם ' +
  'e\u0301 a\u0308 n\u0303 Z̤͔ͧ̑ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u200f\u200e tab\tnewline\n"quotes" \'single\' back\\slash';

/**
 * Every page of the session (limit 2, at every offset up to one past the end) equals the slice
 * of `listAll` at that offset, `listAll` is exactly `ids`, and total/hasMore agree with it.
 */
export async function expectPagesMatchThread(
  backend: StorageBackend,
  sessionId: string,
  ids: readonly (string | undefined)[],
): Promise<void> {
  expect((await backend.messages.listAll(sessionId, {})).map((m) => m.id)).toEqual(ids);
  for (let offset = 0; offset <= ids.length; offset += 1) {
    const page = await backend.messages.page(sessionId, { limit: 2, offset }, {});
    expect({ offset, ids: page.messages.map((m) => m.id), total: page.total }).toEqual({
      offset,
      ids: ids.slice(offset, offset + 2),
      total: ids.length,
    });
    expect(page.hasMore).toBe(offset + 2 < ids.length);
  }
}

export function messageTests(ctx: SuiteContext): void {
  describe('messages', () => {
    it('creates a message with defaults, counts it and reads it back', async () => {
      const session = await ctx.backend.sessions.create({}, { user: 'alice' });
      const message = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'hello',
      });
      expect(message).toMatchObject({
        sessionId: session.id,
        role: 'user',
        content: 'hello',
        toolCalls: [],
        toolCallId: null,
        tokenCount: null,
        modelUsed: null,
        parentId: null,
        metadata: {},
      });
      expect(message.id).toEqual(expect.any(String));
      expect(message.createdAt).toBeInstanceOf(Date);
      expect(await ctx.backend.messages.get(session.id, message.id, { user: 'alice' })).toEqual(
        message,
      );
      expect((await ctx.backend.sessions.get(session.id, {}))?.messageCount).toBe(1);
    });

    it('moves the session to the top of the list when a message is added, keeping its version', async () => {
      const older = await ctx.backend.sessions.create({}, {});
      await sleep(5);
      const newer = await ctx.backend.sessions.create({}, {});
      await sleep(5);
      await ctx.backend.messages.create({ sessionId: older.id, role: 'user', content: 'hi' });
      const touched = await ctx.backend.sessions.get(older.id, {});
      expect(touched?.updatedAt.getTime()).toBeGreaterThan(newer.updatedAt.getTime());
      expect(touched?.version).toBe(older.version);
      const listed = await ctx.backend.sessions.list({}, {});
      expect(listed.sessions.map((s) => s.id)).toEqual([older.id, newer.id]);
    });

    it('stores every field of an assistant and a tool message', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const user = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'q',
      });
      const assistant = await ctx.backend.messages.create({
        id: uid('msg'),
        sessionId: session.id,
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'call_1', name: 'search', args: { query: 'x', n: 2, nested: { ok: true } } },
        ],
        tokenCount: 42,
        modelUsed: 'gpt-4o',
        parentId: user.id,
        metadata: { source: 'test' },
      });
      const tool = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'tool',
        content: 'result',
        toolCallId: 'call_1',
        parentId: user.id,
      });
      expect(await ctx.backend.messages.get(session.id, assistant.id, {})).toEqual(assistant);
      expect(assistant.toolCalls).toEqual([
        { id: 'call_1', name: 'search', args: { query: 'x', n: 2, nested: { ok: true } } },
      ]);
      expect(await ctx.backend.messages.get(session.id, tool.id, {})).toMatchObject({
        role: 'tool',
        toolCallId: 'call_1',
        parentId: user.id,
      });
    });

    it('rejects a message for a missing session', async () => {
      await expectStorageError(
        ctx.backend.messages.create({ sessionId: uid('missing'), role: 'user', content: 'x' }),
        'SESSION_NOT_FOUND',
      );
    });

    it('rejects a duplicate message id as CONFLICT without counting it', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const id = uid('msg');
      await ctx.backend.messages.create({
        id,
        sessionId: session.id,
        role: 'user',
        content: 'first',
      });
      await expectStorageError(
        ctx.backend.messages.create({ id, sessionId: session.id, role: 'user', content: 'second' }),
        'CONFLICT',
      );
      expect((await ctx.backend.messages.get(session.id, id, {}))?.content).toBe('first');
      expect((await ctx.backend.sessions.get(session.id, {}))?.messageCount).toBe(1);
    });

    it('keeps messageCount exact under 50 concurrent inserts', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          ctx.backend.messages.create({ sessionId: session.id, role: 'user', content: `m${i}` }),
        ),
      );
      expect((await ctx.backend.sessions.get(session.id, {}))?.messageCount).toBe(50);
      const all = await ctx.backend.messages.listAll(session.id, {});
      expect(all).toHaveLength(50);
      expect(new Set(all.map((m) => m.id)).size).toBe(50);
      expect(new Set(all.map((m) => m.content)).size).toBe(50);
      expect((await ctx.backend.messages.page(session.id, { limit: 100 }, {})).total).toBe(50);
    });

    it('scopes get to the message session and the caller scope', async () => {
      const a = await ctx.backend.sessions.create({}, { user: 'alice' });
      const b = await ctx.backend.sessions.create({}, { user: 'alice' });
      const inA = await ctx.backend.messages.create({
        sessionId: a.id,
        role: 'user',
        content: 'a',
      });
      expect(await ctx.backend.messages.get(b.id, inA.id, {})).toBeNull();
      expect(await ctx.backend.messages.get(a.id, inA.id, { user: 'bob' })).toBeNull();
      expect(await ctx.backend.messages.get(a.id, uid('missing'), {})).toBeNull();
      expect(await ctx.backend.messages.get(uid('missing'), inA.id, {})).toBeNull();
      expect(await ctx.backend.messages.get(a.id, inA.id, { user: 'alice' })).toEqual(inA);
    });

    it('pages in stable thread order with total and hasMore', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const created = [];
      for (let i = 0; i < 7; i += 1) {
        created.push(
          await ctx.backend.messages.create({
            sessionId: session.id,
            role: i % 2 === 0 ? 'user' : 'assistant',
            content: `m${i}`,
          }),
        );
      }
      const ids = created.map((m) => m.id);
      const p1 = await ctx.backend.messages.page(session.id, { limit: 3, offset: 0 }, {});
      const p2 = await ctx.backend.messages.page(session.id, { limit: 3, offset: 3 }, {});
      const p3 = await ctx.backend.messages.page(session.id, { limit: 3, offset: 6 }, {});
      expect([p1.total, p2.total, p3.total]).toEqual([7, 7, 7]);
      expect([p1.hasMore, p2.hasMore, p3.hasMore]).toEqual([true, true, false]);
      expect([...p1.messages, ...p2.messages, ...p3.messages].map((m) => m.id)).toEqual(ids);
      expect(await ctx.backend.messages.page(session.id, { limit: 3, offset: 0 }, {})).toEqual(p1);
      expect((await ctx.backend.messages.listAll(session.id, {})).map((m) => m.id)).toEqual(ids);
      const defaults = await ctx.backend.messages.page(session.id, {}, {});
      expect(defaults.messages.map((m) => m.id)).toEqual(ids);
      const past = await ctx.backend.messages.page(session.id, { limit: 3, offset: 40 }, {});
      expect(past).toEqual({ messages: [], total: 7, hasMore: false });
    });

    it('appends in thread order and pages exactly after updateMessageCount moved the count', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const add = async (content: string): Promise<string> =>
        (await ctx.backend.messages.create({ sessionId: session.id, role: 'user', content })).id;
      const ids = [await add('m0'), await add('m1')];
      await ctx.backend.sessions.updateMessageCount(session.id, 5);
      ids.push(await add('m2'));
      await ctx.backend.sessions.updateMessageCount(session.id, -6);
      ids.push(await add('m3'), await add('m4'));
      // Positions and totals follow the rows, whatever the counter says.
      await expectPagesMatchThread(ctx.backend, session.id, ids);
    });

    it('rejects bad page queries and pages of sessions outside the caller scope', async () => {
      const session = await ctx.backend.sessions.create({}, { user: 'alice' });
      await expectValidationError(ctx.backend.messages.page(session.id, { limit: 0 }, {}), 'limit');
      await expectValidationError(
        ctx.backend.messages.page(session.id, { limit: PAGE_LIMIT_MAX + 1 }, {}),
        'limit',
      );
      await expectValidationError(
        ctx.backend.messages.page(session.id, { offset: -3 }, {}),
        'offset',
      );
      await expectValidationError(
        ctx.backend.messages.page(session.id, { limit: 1.5 }, {}),
        'limit',
      );
      const max = await ctx.backend.messages.page(session.id, { limit: PAGE_LIMIT_MAX }, {});
      expect(max).toEqual({ messages: [], total: 0, hasMore: false });
      await expectStorageError(
        ctx.backend.messages.page(session.id, {}, { user: 'bob' }),
        'SESSION_NOT_FOUND',
      );
      await expectStorageError(
        ctx.backend.messages.page(uid('missing'), {}, {}),
        'SESSION_NOT_FOUND',
      );
    });

    it('never lists the messages of a session outside the caller scope', async () => {
      const session = await ctx.backend.sessions.create({}, { user: 'alice' });
      await ctx.backend.messages.create({ sessionId: session.id, role: 'user', content: 'secret' });
      let leaked: unknown[] = [];
      try {
        leaked = await ctx.backend.messages.listAll(session.id, { user: 'bob' });
      } catch (error) {
        expectStorageErrorValue(error, 'SESSION_NOT_FOUND');
      }
      expect(leaked).toEqual([]);
    });

    it('deletes every message of one session and resets its count', async () => {
      const a = await ctx.backend.sessions.create({}, {});
      const b = await ctx.backend.sessions.create({}, {});
      for (let i = 0; i < 3; i += 1) {
        await ctx.backend.messages.create({ sessionId: a.id, role: 'user', content: `a${i}` });
      }
      const kept = await ctx.backend.messages.create({
        sessionId: b.id,
        role: 'user',
        content: 'b',
      });
      expect(await ctx.backend.messages.deleteBySession(a.id)).toBe(3);
      expect(await ctx.backend.messages.listAll(a.id, {})).toEqual([]);
      expect((await ctx.backend.sessions.get(a.id, {}))?.messageCount).toBe(0);
      expect(await ctx.backend.messages.listAll(b.id, {})).toEqual([kept]);
      expect(await ctx.backend.messages.deleteBySession(a.id)).toBe(0);
    });

    it('round-trips a 1 MB message and non-ASCII text exactly', async () => {
      const title = Array.from(TRICKY_TEXT).slice(0, 60).join('');
      const session = await ctx.backend.sessions.create({ title }, {});
      const big = 'λ'.repeat(256 * 1024) + 'x'.repeat(768 * 1024);
      const large = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'assistant',
        content: big,
      });
      const tricky = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: TRICKY_TEXT,
        metadata: { note: TRICKY_TEXT },
      });
      const readLarge = await ctx.backend.messages.get(session.id, large.id, {});
      expect(readLarge?.content.length).toBe(1024 * 1024);
      expect(readLarge?.content === big).toBe(true);
      const readTricky = await ctx.backend.messages.get(session.id, tricky.id, {});
      expect(readTricky?.content).toBe(TRICKY_TEXT);
      expect(readTricky?.metadata).toEqual({ note: TRICKY_TEXT });
      expect((await ctx.backend.sessions.get(session.id, {}))?.title).toBe(title);
      const listed = await ctx.backend.messages.listAll(session.id, {});
      expect(listed.map((m) => m.content.length)).toEqual([big.length, TRICKY_TEXT.length]);
    });

    it('rejects invalid message input with field issues and stores nothing', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const create = (input: Record<string, unknown>) =>
        ctx.backend.messages.create({
          sessionId: session.id,
          role: 'user',
          content: 'x',
          ...input,
        });
      await expectValidationError(create({ role: 'robot' }), 'role');
      await expectValidationError(create({ content: 42 }), 'content');
      await expectValidationError(create({ colour: 'blue' }), '(root)');
      await expectValidationError(create({ sessionId: '' }), 'sessionId');
      await expectValidationError(create({ tokenCount: -1 }), 'tokenCount');
      await expectValidationError(create({ toolCalls: [{ id: 'c', name: '' }] }), 'toolCalls.0');
      await expectValidationError(create({ metadata: { k: 1 } }), 'metadata.k');
      await expectValidationError(
        create({ content: 'z'.repeat(MESSAGE_CONTENT_MAX + 1) }),
        'content',
      );
      expect(await ctx.backend.messages.listAll(session.id, {})).toEqual([]);
      expect((await ctx.backend.sessions.get(session.id, {}))?.messageCount).toBe(0);
    });
  });
}
