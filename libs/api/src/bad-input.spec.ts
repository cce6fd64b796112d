import { TRPCError } from '@trpc/server';
import fc from 'fast-check';
import { toHttpError } from './errors';
import type { ApiTestBed } from './testing/test-bed';
import { createApiTestBed } from './testing/test-bed';

/**
 * Property: whatever malformed input a caller sends, every procedure answers with a 4xx-class
 * TRPCError that has a message (naming the field for validation failures), never an
 * INTERNAL_SERVER_ERROR, and nothing stored changes. Every generated input is invalid by
 * construction (each carries at least one defect), so success would also be a failure.
 */

const SEED = 4242;
const RUNS = 120;

type Input = Record<string, unknown>;

const SESSION_KEYS = [
  'id',
  'title',
  'agentName',
  'metadata',
  'config',
  'status',
  'expectedVersion',
];
const MESSAGE_KEYS = ['sessionId', 'messageId', 'limit', 'offset'];
const LIST_KEYS = ['limit', 'offset', 'status', 'metadata'];
const SEND_KEYS = [
  'sessionId',
  'content',
  'parentId',
  'callbackUrl',
  'idempotencyKey',
  'metadata',
  'multitaskStrategy',
];
const EVENTS_KEYS = ['sessionId', 'runId', 'lastEventId'];

/** Strings that stress decoders: lone surrogates, NULs, RTL marks, emoji, combining marks. */
const oddUnicode = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
  fc.constantFrom('\uD800', '\uDFFF\u0000', '\u202Eevil', '👩‍👩‍👧‍👦', 'e\u0301\u0301\u0301', '\uFEFF'),
);

const notAString = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }),
);

const notANumber = notAString.filter((value) => typeof value !== 'number');

const notAnObject = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 3 }),
);

/** Longer than `max` characters; sometimes far longer. */
function hugeString(max: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.integer({ min: max + 1, max: max * 50 }), fc.constantFrom('x', 'é', '😀', '\u0000'))
    .map(([length, unit]) => unit.repeat(length));
}

const badId = fc.oneof(notAString, fc.constant(''), hugeString(128));

const badAgentName = fc.oneof(
  notAString,
  fc.constant(''),
  hugeString(64),
  oddUnicode.map((s) => `-${s}`),
  oddUnicode.map((s) => `a b${s}`),
);

const badMetadata = fc.oneof(
  notAnObject,
  fc
    .record({ key: fc.string({ minLength: 1, maxLength: 10 }), value: notAString })
    .map(({ key, value }) => ({ [`k${key}`]: value })),
  hugeString(128).map((key) => ({ [key]: 'v' })),
  hugeString(2048).map((value) => ({ key: value })),
  fc.constant({ '': 'empty key' }),
);

const badConfig = fc.oneof(
  notAnObject,
  fc
    .oneof(fc.double({ min: 2.0001, max: 1e9, noNaN: true }), fc.constant(-1), notANumber)
    .map((temperature) => ({ temperature })),
  fc
    .oneof(fc.constant(0), fc.constant(1.5), fc.constant(10_000_001))
    .map((maxTokens) => ({ maxTokens })),
  oddUnicode.map((key) => ({ [`x-${key}`]: true })),
);

const badStatus = fc.oneof(notAString, oddUnicode, fc.constantFrom('ACTIVE', 'deleted', ''));
const badCount = fc.oneof(fc.constant(-1), fc.constant(0.5), fc.constant(1e9), notANumber);

function unknownField(known: string[]): fc.Arbitrary<Input> {
  return fc
    .tuple(fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), oddUnicode), fc.anything())
    .filter(([key]) => !known.includes(key))
    .map(([key, value]) => ({ [key]: value }));
}

/** A non-object input (or null/undefined) for procedures whose input must be an object. */
const notAnInput = fc.oneof(notAnObject, fc.constant(null), oddUnicode);

async function snapshot(bed: ApiTestBed): Promise<string> {
  const { sessions } = await bed.storage.sessions.list({ limit: 500 }, {});
  const messages = await Promise.all(sessions.map((s) => bed.storage.messages.listAll(s.id, {})));
  const runs = await Promise.all(sessions.map((s) => bed.storage.runs.list(s.id)));
  return JSON.stringify({ sessions, messages, runs });
}

describe('bad input never causes a 500 nor changes stored data', () => {
  let bed: ApiTestBed;
  let sessionId: string;
  let messageId: string;

  beforeAll(async () => {
    bed = await createApiTestBed();
    const session = await bed.as().sessions.create({ title: 'seed', metadata: { team: 'red' } });
    sessionId = session.id;
    messageId = (await bed.storage.messages.create({ sessionId, role: 'user', content: 'hi' })).id;
  });

  afterAll(async () => {
    await bed.cleanup();
  });

  async function expectRejectedCleanly(call: () => Promise<unknown>): Promise<void> {
    const before = await snapshot(bed);
    let caught: unknown;
    try {
      await call();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TRPCError);
    const error = caught as TRPCError;
    expect(error.code).not.toBe('INTERNAL_SERVER_ERROR');
    expect(error.message.length).toBeGreaterThan(0);
    const { status, body } = toHttpError(error);
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
    if (body.code === 'VALIDATION_ERROR') expect(body.errors?.length).toBeGreaterThan(0);
    expect(await snapshot(bed)).toBe(before);
  }

  function check(
    inputs: fc.Arbitrary<unknown>,
    call: (input: never) => Promise<unknown>,
  ): Promise<void> {
    return fc.assert(
      fc.asyncProperty(inputs, (input) => expectRejectedCleanly(() => call(input as never))),
      { seed: SEED, numRuns: RUNS },
    );
  }

  it('sessions.create', async () => {
    const inputs = fc.oneof(
      notAnInput,
      fc.record({ title: fc.oneof(notAString, hugeString(200)) }),
      fc.record({ agentName: badAgentName }),
      fc.record({ metadata: badMetadata, title: oddUnicode }),
      fc.record({ config: badConfig }),
      fc.constantFrom<Input>(
        { scopes: { user: 'mallory' } },
        { id: 'chosen-id' },
        { parentId: 'p' },
      ),
      unknownField(SESSION_KEYS),
    );
    await check(inputs, (input) => bed.as().sessions.create(input));
  });

  it('sessions.get and sessions.delete', async () => {
    const inputs = fc.oneof(
      notAnInput,
      fc.constant({}),
      fc.record({ id: badId }),
      unknownField(['id']).map((extra) => ({ id: sessionId, ...extra })),
    );
    await check(inputs, (input) => bed.as().sessions.get(input));
    await check(inputs, (input) => bed.as().sessions.delete(input));
  });

  it('sessions.list', async () => {
    const inputs = fc.oneof(
      notAnObject,
      fc.constant(null),
      fc.record({ limit: badCount }),
      fc.record({ limit: fc.integer({ min: 501, max: 1e6 }) }),
      fc.record({
        offset: fc.oneof(fc.integer({ max: -1 }), fc.constant(1.5), notANumber),
      }),
      fc.record({ status: badStatus }),
      fc.record({ metadata: badMetadata }),
      unknownField(LIST_KEYS),
    );
    await check(inputs, (input) => bed.as().sessions.list(input));
  });

  it('sessions.update', async () => {
    const defect = fc.oneof(
      fc.record({ title: fc.oneof(notAString, hugeString(200)) }),
      fc.record({ agentName: badAgentName }),
      fc.record({ metadata: badMetadata }),
      fc.record({ config: badConfig }),
      fc.record({ status: badStatus }),
      fc.record({
        expectedVersion: fc.oneof(
          fc.constant(0),
          fc.constant(-3),
          fc.constant(1.5),
          fc.constant('1'),
        ),
      }),
      fc.constantFrom<Input>({ scopes: { user: 'mallory' } }, { messageCount: 9 }, { version: 7 }),
      unknownField(SESSION_KEYS),
    );
    const inputs = fc.oneof(
      notAnInput,
      fc
        .tuple(fc.record({ title: oddUnicode }), defect)
        .map(([valid, bad]) => ({ id: sessionId, ...valid, ...bad })),
      fc.record({ id: badId, title: fc.constant('renamed') }),
      fc.record({ title: fc.constant('no id') }),
    );
    await check(inputs, (input) => bed.as().sessions.update(input));
  });

  it('messages.list', async () => {
    const inputs = fc.oneof(
      notAnInput,
      fc.constant({}),
      fc.record({ sessionId: badId }),
      fc.record({
        sessionId: fc.constant(sessionId),
        limit: fc.oneof(badCount, fc.integer({ min: 501 })),
      }),
      fc.record({
        sessionId: fc.constant(sessionId),
        offset: fc.oneof(fc.integer({ max: -1 }), notANumber),
      }),
      unknownField(MESSAGE_KEYS).map((extra) => ({ sessionId, ...extra })),
    );
    await check(inputs, (input) => bed.as().messages.list(input));
  });

  it('messages.get', async () => {
    const inputs = fc.oneof(
      notAnInput,
      fc.constant({ sessionId: 'only-session' }),
      fc.record({ sessionId: fc.constant(sessionId), messageId: badId }),
      fc.record({ sessionId: badId, messageId: fc.constant(messageId) }),
      unknownField(MESSAGE_KEYS).map((extra) => ({ sessionId, messageId, ...extra })),
    );
    await check(inputs, (input) => bed.as().messages.get(input));
  });

  it('messages.send', async () => {
    const defect = fc.oneof(
      fc.record({
        content: fc.oneof(notAString, fc.constant(''), fc.constant('x'.repeat(2_000_001))),
      }),
      fc.record({ parentId: badId }),
      fc.record({
        callbackUrl: fc.oneof(
          notAString,
          oddUnicode,
          fc.constantFrom('ftp://x.example/a', 'javascript:alert(1)', 'file:///etc/passwd', ''),
          hugeString(2048).map((tail) => `https://x.example/${tail}`),
        ),
      }),
      fc.record({ idempotencyKey: fc.oneof(notAString, fc.constant(''), hugeString(256)) }),
      fc.record({ metadata: badMetadata }),
      fc.record({
        multitaskStrategy: fc.oneof(
          notAString,
          oddUnicode,
          fc.constantFrom('later', 'ENQUEUE', 'Reject', ''),
        ),
      }),
      fc.constantFrom<Input>({ scope: { user: 'mallory' } }, { runId: 'r' }, { role: 'system' }),
      unknownField(SEND_KEYS),
    );
    const inputs = fc.oneof(
      notAnInput,
      fc.record({ sessionId: badId, content: fc.constant('hi') }),
      fc.constant({ content: 'no session' }),
      defect.map((bad) => ({ sessionId, content: 'hi', ...bad })),
    );
    await check(inputs, (input) => bed.as().messages.send(input));
  });

  it('runs.abort, runs.list, runs.get and runs.events', async () => {
    const sessionInputs = fc.oneof(
      notAnInput,
      fc.constant({}),
      fc.record({ sessionId: badId }),
      unknownField(['sessionId']).map((extra) => ({ sessionId, ...extra })),
    );
    await check(sessionInputs, (input) => bed.as().runs.abort(input));
    await check(sessionInputs, (input) => bed.as().runs.list(input));
    await check(
      fc.oneof(
        sessionInputs,
        fc.record({ sessionId: fc.constant(sessionId), runId: badId }),
        fc.record({ sessionId: fc.constant(sessionId), runId: fc.uuid() }),
      ),
      (input) => bed.as().runs.get(input),
    );
    await check(
      fc.oneof(
        notAnInput,
        fc.record({ sessionId: badId }),
        fc.record({ sessionId: fc.constant(sessionId), runId: badId }),
        fc.record({
          sessionId: fc.constant(sessionId),
          lastEventId: fc.oneof(notAString, oddUnicode, fc.constantFrom('', 'no-colon', ':1')),
        }),
        fc.record({ sessionId: fc.constant(sessionId), runId: fc.uuid() }),
        unknownField(EVENTS_KEYS).map((extra) => ({ sessionId, ...extra })),
      ),
      (input) => bed.as().runs.events(input),
    );
  });

  it('lookups of unknown, odd or out-of-scope ids are 404s, never 500s', async () => {
    const ids = fc.oneof(
      oddUnicode.filter((s) => s.length <= 128),
      fc.uuid(),
    );
    await fc.assert(
      fc.asyncProperty(ids, async (id) => {
        await expectRejectedCleanly(() => bed.as().sessions.get({ id }));
        await expectRejectedCleanly(() => bed.as().sessions.update({ id, title: 't' }));
        await expectRejectedCleanly(() =>
          bed.as({ user: 'other' }).messages.get({ sessionId, messageId: id }),
        );
      }),
      { seed: SEED, numRuns: 60 },
    );
  });
});
