import { langGraphServerForSpec } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';

/**
 * The `messages` stream mode (partial messages) over the LangGraph API (issue 28), with the
 * official SDK against the built server on SQLite and PostgreSQL: `messages/metadata`,
 * `messages/partial` (the message so far) and `messages/complete` for a `langgraph.json` graph's
 * run and an agent's, the same parts again when the run's stream is joined afterwards, and from
 * a `Last-Event-ID` only what follows it, built on what came before.
 */
const ALICE = 'e2e-lg-messages-alice-0123456789';
const BOB = 'e2e-lg-messages-bob-0123456789';

type Part = { event: string; data: unknown; id?: string | undefined };
type Message = { id?: string; type?: string; content?: unknown };

async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

const named = (parts: Part[], event: string) => parts.filter((p) => p.event === event);
const lastPartial = (parts: Part[]) =>
  (named(parts, 'messages/partial').at(-1)?.data as Message[] | undefined)?.[0];
const completed = (parts: Part[]) =>
  named(parts, 'messages/complete').flatMap((p) => p.data as Message[]);

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-lg-messages-')],
  ['PostgreSQL', postgresServerDatabase],
])('LangGraph API: the messages stream mode on %s (issue 28)', (_name, createDatabase) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    createDatabase,
    'cognition-e2e-lg-messages-ws-',
    { echoModel: true },
  );

  it("streams a graph run's messages partial and complete, and the same on a join", async () => {
    const thread = await lg.alice.threads.create();
    const parts = await collect(
      lg.alice.runs.stream(thread.thread_id, 'agent', {
        input: { messages: [{ type: 'human', content: 'weather?' }] },
        streamMode: ['messages'],
        streamResumable: true,
      }) as AsyncIterable<Part>,
    );
    expect(parts[0]?.event).toBe('metadata');
    const metadata = named(parts, 'messages/metadata');
    expect(metadata.length).toBeGreaterThan(0);
    const [announced] = Object.values(metadata[0]?.data as Record<string, { metadata: unknown }>);
    expect(announced?.metadata).toMatchObject({ langgraph_node: 'model' });
    expect(lastPartial(parts)).toMatchObject({ content: 'The weather: sunny in Paris' });
    const complete = completed(parts);
    expect(complete[0]).toMatchObject({ type: 'human', content: 'weather?' });
    expect(complete.at(-1)).toMatchObject({ type: 'ai', content: 'The weather: sunny in Paris' });
    // Each message is complete once.
    const ids = complete.map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    // No other mode's parts.
    expect(parts.filter((p) => !p.event.startsWith('messages/') && p.event !== 'metadata')).toEqual(
      [],
    );

    // Joined afterwards: the same parts, made again from the stored events.
    const [run] = await lg.alice.runs.list(thread.thread_id);
    const joined = await collect(
      lg.alice.runs.joinStream(thread.thread_id, run?.run_id ?? '', {
        streamMode: ['messages'],
      }) as AsyncIterable<Part>,
    );
    const strip = (list: Part[]) =>
      list.filter((p) => p.event !== 'metadata').map((p) => ({ event: p.event, data: p.data }));
    expect(strip(joined)).toEqual(strip(parts));
  });

  it("streams an agent run's tokens as partial messages, then the thread's messages complete", async () => {
    const thread = await lg.alice.threads.create({ graphId: 'agent:default' });
    const parts = await collect(
      lg.alice.runs.stream(thread.thread_id, 'agent:default', {
        input: { messages: [{ type: 'human', content: 'hello there' }] },
        streamMode: ['messages', 'values'],
      }) as AsyncIterable<Part>,
    );
    expect(named(parts, 'messages/metadata')).toHaveLength(1);
    expect(lastPartial(parts)).toMatchObject({
      type: 'AIMessageChunk',
      content: 'You said: hello there',
    });
    const partials = named(parts, 'messages/partial').map(
      (p) => (p.data as Message[])[0]?.content as string,
    );
    // Each partial is the message so far: every one a prefix of the next.
    partials.slice(1).forEach((text, i) => expect(text.startsWith(partials[i] ?? '')).toBe(true));
    expect(completed(parts).map((m) => [m.type, m.content])).toEqual([
      ['human', 'hello there'],
      ['ai', 'You said: hello there'],
    ]);
    expect(named(parts, 'values')).toHaveLength(1);

    // Rejoined from a Last-Event-ID in the middle: only what follows it, each partial still
    // the whole message so far (built on the chunks before the cut), announced once.
    const [run] = await lg.alice.runs.list(thread.thread_id);
    const withIds = named(parts, 'messages/partial');
    const middle = Math.floor(withIds.length / 2);
    expect(middle).toBeGreaterThan(0);
    const cut = withIds[middle - 1]?.id ?? '';
    expect(cut).not.toBe('');
    const after = await collect(
      lg.alice.runs.joinStream(thread.thread_id, run?.run_id ?? '', {
        streamMode: ['messages'],
        lastEventId: cut,
      }) as AsyncIterable<Part>,
    );
    expect(named(after, 'messages/metadata')).toEqual([]);
    expect(named(after, 'messages/partial').map((p) => (p.data as Message[])[0]?.content)).toEqual(
      partials.slice(middle),
    );
    expect(after.every((p) => p.id === undefined || p.id > cut)).toBe(true);
  });
});
