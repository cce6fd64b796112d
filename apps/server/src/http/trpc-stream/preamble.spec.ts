import type { AppRouter } from '@cognition/api';
import type { AgentEventEnvelope } from '@cognition/contracts';
import type { TRPCClient } from '@trpc/client';
import {
  createTRPCClient,
  httpBatchStreamLink,
  httpSubscriptionLink,
  splitLink,
  TRPCClientError,
} from '@trpc/client';
import { EventSource } from 'eventsource';
import superjson from 'superjson';
import type { TestApp } from '../../testing/test-app';
import { createTestApp } from '../../testing/test-app';
import type { Listening } from '../../testing/trpc-reference';
import {
  ALICE,
  AUTH,
  BOB,
  drain,
  listen,
  recordWrites,
  referenceApp,
  servicesOf,
} from '../../testing/trpc-reference';

/*
 * The preamble both hand-written stream routes share (context, head, frames, error shapes),
 * pinned against `@trpc/client` itself: its own links, as an application would configure them
 * without @cognition/client, get from our writers what they get from tRPC's adapter.
 */

type Client = TRPCClient<AppRouter>;

/** `@trpc/client` over SSE for subscriptions and JSON Lines batches for the rest. */
function trpcClient(base: string, headers: Record<string, string>): Client {
  const url = `${base}/trpc`;
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({
          url,
          transformer: superjson,
          EventSource,
          eventSourceOptions: () => ({
            fetch: (input, init) =>
              fetch(input, { ...init, headers: { ...init.headers, ...headers } }),
          }),
        }),
        false: httpBatchStreamLink({ url, transformer: superjson, headers: () => headers }),
      }),
    ],
  });
}

/** A subscription to `runs.events` to its end: the envelopes, and the error it failed with. */
function runEvents(
  client: Client,
  input: { sessionId: string; runId?: string },
): Promise<{ events: AgentEventEnvelope[]; error?: unknown }> {
  const events: AgentEventEnvelope[] = [];
  return new Promise((resolve) => {
    const subscription = client.runs.events.subscribe(input, {
      // A tracked event arrives as `{ id, data }`: the id is what a reconnect resumes after.
      onData: (tracked) => events.push(tracked.data),
      onComplete: () => resolve({ events }),
      onError: (error) => {
        subscription.unsubscribe();
        resolve({ events, error });
      },
    });
  });
}

/** What a rejection tells a client: tRPC's error data (code, httpStatus...) and message. */
function described(error: unknown): unknown {
  if (!(error instanceof TRPCClientError)) return error;
  const { stack: _stack, ...data } = (error.data ?? {}) as Record<string, unknown>;
  return { message: error.message, data };
}

let t: TestApp;
let ours: Listening;
let reference: Listening;
let sessionId: string;
let runId: string;

beforeAll(async () => {
  t = await createTestApp(AUTH);
  ours = await listen(t.app);
  reference = await listen(referenceApp(servicesOf(t), AUTH));
  const alice = trpcClient(ours.url, ALICE);
  sessionId = (await alice.sessions.create.mutate({ title: 'preamble' })).id;
  t.model.push({ text: ['one', ' two'] });
  const sent = await alice.messages.stream.mutate({ sessionId, content: 'count' });
  runId = sent.run.id;
  await drain(sent.events);
});

afterAll(async () => {
  await t.close();
  await ours.close();
  await reference.close();
});

afterEach(() => {
  jest.restoreAllMocks();
  expect(t.model.untaken).toBe(0);
});

describe("@trpc/client's own links against the hand-written stream routes", () => {
  it('httpSubscriptionLink: runs.events yields what the adapter yields, served by our writer', async () => {
    const writes = recordWrites();
    const served = await runEvents(trpcClient(ours.url, ALICE), { sessionId, runId });
    writes.restore();
    const expected = await runEvents(trpcClient(reference.url, ALICE), { sessionId, runId });
    expect(served).toEqual(expected);
    expect(served.events.at(-1)?.event.type).toBe('done');
    expect(writes.strings().some((w) => w.startsWith('event: connected\n'))).toBe(true);
  });

  it('httpBatchStreamLink: messages.stream streams a turn as through the adapter, served by our writer', async () => {
    const stream = async (base: string) => {
      t.model.push({ text: ['a', 'b'] });
      const sent = await trpcClient(base, ALICE).messages.stream.mutate({
        sessionId,
        content: 'ab',
      });
      return (await drain(sent.events)).map((e) => e.event.type);
    };
    const writes = recordWrites();
    const served = await stream(ours.url);
    writes.restore();
    expect(served).toEqual(await stream(reference.url));
    expect(served.at(-1)).toBe('done');
    expect(writes.strings()[0]).toBe('{"json":{"0":[[0],[null,0,0]]}}\n');
  });

  it.each([
    ["another tenant's session (404)", BOB, () => ({ sessionId })],
    ['an unknown session (404)', ALICE, () => ({ sessionId: 'nope' })],
  ])('both routes reject %s with the error the adapter gives', async (_name, headers, inputOf) => {
    const subscribe = async (base: string) =>
      described((await runEvents(trpcClient(base, headers), inputOf())).error);
    const writes = recordWrites();
    const subscribed = await subscribe(ours.url);
    writes.restore();
    expect(subscribed).toEqual(await subscribe(reference.url));
    expect(writes.strings().some((w) => w.startsWith('event: serialized-error\n'))).toBe(true);

    const send = async (base: string) =>
      described(
        await trpcClient(base, headers)
          .messages.stream.mutate({ ...inputOf(), content: 'x' })
          .then(
            () => new Error('unexpected success'),
            (error: unknown) => error,
          ),
      );
    const sendWrites = recordWrites();
    const sent = await send(ours.url);
    sendWrites.restore();
    expect(sent).toEqual(await send(reference.url));
    expect(sendWrites.strings().some((w) => w.includes('"error"'))).toBe(true);
    expect(sent).toMatchObject({ data: { httpStatus: 404 } });
  });
});
