import { TRPCError } from '@trpc/server';
import { describeError, toHttpError } from './errors';
import type { ApiTestBed } from './testing/test-bed';
import { createApiTestBed, trpcErrorOf } from './testing/test-bed';

/**
 * Issue 31 fuzz findings in the API layer:
 * - a string with an unpaired surrogate (`"\ud800"` in JSON) passed every schema and reached
 *   storage, where the Prisma engine failed to encode it: `messages.get` with such a session id
 *   answered 500 (`JSON Error: unexpected end of hex escape`). Now a 422 naming the field, for
 *   values and keys, before any schema or store runs.
 * - a NUL character in an id, a filter or a metadata key reached PostgreSQL, which refuses it:
 *   500 STORAGE_ERROR (`sessions.fork {id: "a\u0000b"}`, `artifacts.versions`, `sessions.list`
 *   with a metadata filter key "\u0000"); SQLite stored it. Now a 422 naming the field on
 *   every backend.
 * - tRPC's own refusals (a body over the limit, a superjson `meta` it will not read) named no
 *   field: `errors` was empty.
 */
describe('issue 31: unstorable strings and tRPC transport refusals', () => {
  let bed: ApiTestBed;
  beforeEach(async () => {
    bed = await createApiTestBed();
  });
  afterEach(async () => {
    await bed.cleanup();
  });

  it('refuses values superjson made into what no procedure takes (a Date as the input, a Map, a BigInt)', async () => {
    // Found by the fuzz: a Date passes `z.object({...}).strict()` with none of its fields, so
    // `sessions.watch` for one session (made a Date by its meta) watched every session in scope.
    const api = bed.as();
    const cases: [Promise<unknown>, string, string][] = [
      [
        api.sessions.list(new Date(0) as never),
        '(root)',
        'must be an object, not a Date (superjson meta)',
      ],
      [
        api.sessions.watch(new Date(0) as never),
        '(root)',
        'must be an object, not a Date (superjson meta)',
      ],
      [api.sessions.stats({ from: new Date(Number.NaN) }), 'from', 'must be a valid date'],
      [
        api.sessions.create({ title: new Map() } as never),
        'title',
        'must be JSON data, not a Map (superjson meta)',
      ],
      [
        api.sessions.list({ limit: BigInt(1) } as never),
        'limit',
        'must be JSON data, not a BigInt (superjson meta)',
      ],
    ];
    for (const [call, path, message] of cases) {
      const error = await trpcErrorOf(call);
      expect(describeError(error).issues).toEqual([{ path, message }]);
      expect(toHttpError(error).status).toBe(422);
    }
    // Date filters still take Dates.
    await expect(api.sessions.stats({ from: new Date(0) })).resolves.toBeDefined();
  });

  it('refuses an unpaired surrogate anywhere in an input with a 422 naming the field', async () => {
    const api = bed.as();
    const session = await api.sessions.create({ title: 'ok' });
    const cases: [Promise<unknown>, string][] = [
      [api.messages.get({ sessionId: '\uD800', messageId: 'm' }), 'sessionId'],
      [api.sessions.create({ title: 'a\uDFFFb' }), 'title'],
      [api.sessions.update({ id: session.id, metadata: { k: 'x\uDBFF' } }), 'metadata.k'],
      [api.sessions.update({ id: session.id, metadata: { ['\uD800']: 'v' } }), 'metadata.\uD800'],
    ];
    for (const [call, path] of cases) {
      const error = await trpcErrorOf(call);
      const described = describeError(error);
      expect(described.code).toBe('VALIDATION_ERROR');
      expect(described.issues?.[0]?.path).toBe(path);
      expect(toHttpError(error).status).toBe(422);
    }
    const nul: [Promise<unknown>, string][] = [
      [api.sessions.fork({ id: 'a\u0000b' }), 'id'],
      [api.sessions.list({ metadata: { '\u0000': 'x' } }), 'metadata.\u0000'],
      [api.artifacts.versions({ id: '\u0000' }), 'id'],
      [api.sessions.create({ title: 'nul \u0000 inside' }), 'title'],
    ];
    for (const [call, path] of nul) {
      const described = describeError(await trpcErrorOf(call));
      expect(described.code).toBe('VALIDATION_ERROR');
      expect(described.issues).toEqual([
        { path, message: 'must not contain NUL characters (U+0000)' },
      ]);
    }
    // Well-formed pairs (emoji) are fine.
    await expect(api.sessions.create({ title: '😀 \uD83D\uDE00' })).resolves.toMatchObject({
      title: '😀 😀',
    });
  });

  it('names the body or the input when tRPC itself refuses a request', () => {
    const tooLarge = describeError(new TRPCError({ code: 'PAYLOAD_TOO_LARGE' }));
    expect(tooLarge.issues).toEqual([
      { path: '(body)', message: 'request body exceeds the size limit' },
    ]);
    const meta = describeError(
      new TRPCError({ code: 'BAD_REQUEST', message: '__proto__ is not allowed as a property' }),
    );
    expect(meta.code).toBe('VALIDATION_ERROR');
    expect(meta.issues).toEqual([
      { path: '(input)', message: '__proto__ is not allowed as a property' },
    ]);
  });
});
