import type { StorageBackend } from '@cognition/storage';
import { nextCheckpointId } from '@cognition/storage/testing';
import type { BaseMessage } from '@langchain/core/messages';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import pg from 'pg';
import type { OpenedDatabase } from '../db/db';
import { openPostgres } from '../db/db';
import { PrismaCheckpointSaver } from '../langgraph/checkpoint-saver';
import { messageProjectionHook } from './projection';
import { createPrismaStorage } from '../prisma-storage';
import type { TestDatabase } from '../testing/test-db';
import { createTestDatabase } from '../testing/test-db';

/**
 * A root put on PostgreSQL plans its projection from a read without a lock and writes the
 * checkpoint, the rows and the session in one statement guarded by the session row's version.
 * These cases check that the guard sees a write that lands between the read and the statement
 * (the put then runs locked and stays correct), and that an appending put is two statements.
 */

let database: TestDatabase;
let backend: StorageBackend;
let opened: OpenedDatabase;

beforeAll(async () => {
  database = await createTestDatabase('postgresql');
  if (database.provider !== 'postgresql') throw new Error('postgresql only');
  backend = createPrismaStorage({ provider: 'postgresql', url: database.url });
  await backend.initialize();
  opened = await openPostgres(database.url);
});
afterAll(async () => {
  await opened.close();
  await backend.close();
  await database.cleanup();
});

/** Puts a root checkpoint holding `messages` after `parentId`; returns its id. */
async function putWith(
  saver: PrismaCheckpointSaver,
  threadId: string,
  parentId: string | undefined,
  messages: BaseMessage[],
): Promise<string> {
  const id = nextCheckpointId();
  await saver.put(
    {
      configurable: {
        thread_id: threadId,
        checkpoint_ns: '',
        ...(parentId !== undefined ? { checkpoint_id: parentId } : {}),
      },
    },
    {
      ...emptyCheckpoint(),
      id,
      channel_values: { messages },
      channel_versions: { messages: messages.length + 1 },
    },
    { source: 'loop', step: messages.length, parents: {} },
    { messages: messages.length + 1 },
  );
  return id;
}

/**
 * A session whose thread holds two messages, put by `saver` (which then knows the parent as the
 * server's saver does). Message ids are unique across sessions: each case names its own.
 */
async function sessionWithHistory(
  saver: PrismaCheckpointSaver,
  p: string,
): Promise<{
  sessionId: string;
  threadId: string;
  parentId: string;
  history: BaseMessage[];
}> {
  const session = await backend.sessions.create({ title: 'guarded put' }, {});
  const history = [
    new HumanMessage({ id: `${p}u0`, content: 'question' }),
    new AIMessage({ id: `${p}a0`, content: 'answer' }),
  ];
  const parentId = await putWith(saver, session.threadId, undefined, history);
  return { sessionId: session.id, threadId: session.threadId, parentId, history };
}

it('a message inserted between the plan and its statement is kept after the projection', async () => {
  const late: { sessionId?: string } = {};
  const saver = new PrismaCheckpointSaver(opened.db, {
    onRootCheckpoint: {
      ...messageProjectionHook,
      postgresqlPlan: async (pool, put) => {
        const planned = await messageProjectionHook.postgresqlPlan?.(pool, put);
        // Lands after the plan's read: the planned row would take the position it takes.
        if (late.sessionId !== undefined)
          await backend.messages.create({
            id: 'late',
            sessionId: late.sessionId,
            role: 'user',
            content: 'late',
          });
        return planned;
      },
    },
  });
  const { sessionId, threadId, parentId, history } = await sessionWithHistory(saver, 'a');
  late.sessionId = sessionId;

  await putWith(saver, threadId, parentId, [
    ...history,
    new HumanMessage({ id: 'au1', content: 'next' }),
  ]);

  const rows = await backend.messages.listAll(sessionId, {});
  expect(rows.map((row) => row.id)).toEqual(['au0', 'aa0', 'au1', 'late']);
  expect((await backend.sessions.get(sessionId, {}))?.messageCount).toBe(4);
});

it('an appending put is two statements: the read and the guarded write', async () => {
  const saver = new PrismaCheckpointSaver(opened.db, { onRootCheckpoint: messageProjectionHook });
  const { sessionId, threadId, parentId, history } = await sessionWithHistory(saver, 'b');
  const query = jest.spyOn(pg.Client.prototype, 'query');
  try {
    await putWith(saver, threadId, parentId, [
      ...history,
      new HumanMessage({ id: 'bu1', content: 'next' }),
    ]);
    expect(query).toHaveBeenCalledTimes(2);
  } finally {
    query.mockRestore();
  }
  const rows = await backend.messages.listAll(sessionId, {});
  expect(rows.map((row) => row.id)).toEqual(['bu0', 'ba0', 'bu1']);
});
