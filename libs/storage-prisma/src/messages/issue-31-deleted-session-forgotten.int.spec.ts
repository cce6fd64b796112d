import type { Session } from '@cognition/contracts';
import type { StorageBackend } from '@cognition/storage';
import { nextCheckpointId } from '@cognition/storage/testing';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import pg from 'pg';
import { RecentCheckpoints } from '../langgraph/recent-checkpoints';
import { createPrismaStorage } from '../prisma-storage';
import type { TestDatabase } from '../testing/test-db';
import { createTestDatabase } from '../testing/test-db';
import { rememberedThreads } from './projection-ahead';

/**
 * Issue 31 (the soak): after a put, this process remembers per thread the rows the put left
 * (`projection-ahead.ts`), so that the thread's next put needs no read, and the saver the
 * checkpoint it put (`RecentCheckpoints`). A deleted session's entries must go with the
 * session: bounded (256 threads), but until 256 newer threads evicted them, they held the
 * deleted rows and checkpoint in memory.
 */

let database: TestDatabase;
let backend: StorageBackend;

beforeAll(async () => {
  database = await createTestDatabase('postgresql');
  if (database.provider !== 'postgresql') throw new Error('postgresql only');
  backend = createPrismaStorage({ provider: 'postgresql', url: database.url });
  await backend.initialize();
});
afterAll(async () => {
  await backend.close();
  await database.cleanup();
});

/** A session with one turn put by the backend's checkpointer (as a run's graph puts it). */
async function sessionWithTurn(p: string): Promise<Session> {
  const session = await backend.sessions.create({ title: p }, {});
  const messages = [
    new HumanMessage({ id: `${p}u0`, content: 'question' }),
    new AIMessage({ id: `${p}a0`, content: 'answer' }),
  ];
  await backend.checkpointer.put(
    { configurable: { thread_id: session.threadId, checkpoint_ns: '' } },
    {
      ...emptyCheckpoint(),
      id: nextCheckpointId(),
      channel_values: { messages },
      channel_versions: { messages: 3 },
    },
    { source: 'loop', step: 2, parents: {} },
    { messages: 3 },
  );
  return session;
}

it('deleting a session forgets the rows its thread’s last put left', async () => {
  // The backend's pool is private: it is the one its puts query.
  const query = jest.spyOn(pg.Pool.prototype, 'query');
  let sessions: Session[];
  let pools: unknown[];
  try {
    sessions = [await sessionWithTurn('a'), await sessionWithTurn('b'), await sessionWithTurn('c')];
    pools = query.mock.contexts.map((context: unknown) => context);
  } finally {
    query.mockRestore();
  }
  const pool = pools.find((c) => rememberedThreads(c as pg.Pool).length > 0) as pg.Pool;
  const threads = (): string[] => rememberedThreads(pool);
  expect(threads()).toEqual(sessions.map((s) => s.threadId));

  expect(await backend.sessions.delete(sessions[1]?.id ?? '', {})).toBe(true);
  expect(threads()).toEqual([sessions[0]?.threadId, sessions[2]?.threadId]);
  for (const session of [sessions[0], sessions[2]])
    expect(await backend.sessions.delete(session?.id ?? '', {})).toBe(true);
  expect(threads()).toEqual([]);
});

it('deleting a session forgets the saver’s last checkpoint of its thread', async () => {
  const session = await sessionWithTurn('d');
  const forget = jest.spyOn(RecentCheckpoints.prototype, 'forgetThread');
  try {
    expect(await backend.sessions.delete(session.id, {})).toBe(true);
    expect(forget).toHaveBeenCalledWith(session.threadId);
  } finally {
    forget.mockRestore();
  }
});
