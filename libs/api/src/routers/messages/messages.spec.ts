import { toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { createApiTestBed, trpcErrorOf } from '../../testing/test-bed';

describe('messages router', () => {
  let bed: ApiTestBed;
  let sessionId: string;

  beforeEach(async () => {
    bed = await createApiTestBed();
    sessionId = (await bed.as().sessions.create({})).id;
  });

  afterEach(async () => {
    await bed.cleanup();
  });

  async function addMessages(count: number, target = sessionId): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const message = await bed.storage.messages.create({
        sessionId: target,
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: `m${i}`,
      });
      ids.push(message.id);
    }
    return ids;
  }

  describe('list', () => {
    it('defaults to 50 per page in thread order and reports hasMore', async () => {
      const ids = await addMessages(55);
      const first = await bed.as().messages.list({ sessionId });
      expect(first.total).toBe(55);
      expect(first.messages).toHaveLength(50);
      expect(first.hasMore).toBe(true);
      expect(first.messages.map((m) => m.id)).toEqual(ids.slice(0, 50));

      const rest = await bed.as().messages.list({ sessionId, offset: 50 });
      expect(rest.messages.map((m) => m.content)).toEqual(['m50', 'm51', 'm52', 'm53', 'm54']);
      expect(rest.hasMore).toBe(false);

      const small = await bed.as().messages.list({ sessionId, limit: 2, offset: 1 });
      expect(small.messages.map((m) => m.content)).toEqual(['m1', 'm2']);
      expect(small.hasMore).toBe(true);
    });

    it('404s an unknown session', async () => {
      const error = await trpcErrorOf(bed.as().messages.list({ sessionId: 'ghost' }));
      expect(toHttpError(error)).toEqual({
        status: 404,
        body: { detail: 'Session not found: ghost', code: 'SESSION_NOT_FOUND' },
      });
    });

    it('rejects a bad page query naming the field', async () => {
      const error = await trpcErrorOf(bed.as().messages.list({ sessionId, limit: -5 }));
      const { status, body } = toHttpError(error);
      expect(status).toBe(422);
      expect(body.errors?.map((issue) => issue.path)).toEqual(['limit']);
    });
  });

  describe('get', () => {
    it('returns a message of the session', async () => {
      const [id = ''] = await addMessages(1);
      const message = await bed.as().messages.get({ sessionId, messageId: id });
      expect(message).toMatchObject({ id, sessionId, role: 'user', content: 'm0' });
      expect(message.createdAt).toBeInstanceOf(Date);
    });

    it('404s a message that belongs to another session', async () => {
      const otherSession = (await bed.as().sessions.create({})).id;
      const [foreignId = ''] = await addMessages(1, otherSession);
      const error = await trpcErrorOf(bed.as().messages.get({ sessionId, messageId: foreignId }));
      expect(error.code).toBe('NOT_FOUND');
      expect(toHttpError(error)).toEqual({
        status: 404,
        body: { detail: `Message not found: ${foreignId}`, code: 'MESSAGE_NOT_FOUND' },
      });
    });

    it('404s an unknown session before looking at the message', async () => {
      const error = await trpcErrorOf(
        bed.as().messages.get({ sessionId: 'ghost', messageId: 'm' }),
      );
      expect(toHttpError(error).body.code).toBe('SESSION_NOT_FOUND');
    });
  });
});
