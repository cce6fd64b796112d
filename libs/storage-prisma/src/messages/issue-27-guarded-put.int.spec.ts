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
        // Lands after the first plan (made from what the saver's last put left): the planned
        // row would take the position it takes. Once: a second plan reads it.
        if (late.sessionId !== undefined) {
          const sessionId = late.sessionId;
          delete late.sessionId;
          await backend.messages.create({ id: 'late', sessionId, role: 'user', content: 'late' });
        }
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

it('an appending put after this process put the parent is one statement: the guarded write', async () => {
  const saver = new PrismaCheckpointSaver(opened.db, { onRootCheckpoint: messageProjectionHook });
  const { sessionId, threadId, parentId, history } = await sessionWithHistory(saver, 'b');
  const query = jest.spyOn(pg.Client.prototype, 'query');
  try {
    await putWith(saver, threadId, parentId, [
      ...history,
      new HumanMessage({ id: 'bu1', content: 'next' }),
    ]);
    expect(query).toHaveBeenCalledTimes(1);
  } finally {
    query.mockRestore();
  }
  const rows = await backend.messages.listAll(sessionId, {});
  expect(rows.map((row) => row.id)).toEqual(['bu0', 'ba0', 'bu1']);
});

it('an appending put after another writer touched the session is the refused write, the read and the guarded write', async () => {
  const saver = new PrismaCheckpointSaver(opened.db, { onRootCheckpoint: messageProjectionHook });
  const { sessionId, threadId, parentId, history } = await sessionWithHistory(saver, 'c');
  // Another writer of the session (as another node's would): the session row's xmin moves.
  await backend.messages.create({ id: 'cdirect', sessionId, role: 'user', content: 'typed' });
  const query = jest.spyOn(pg.Client.prototype, 'query');
  try {
    await putWith(saver, threadId, parentId, [
      ...history,
      new HumanMessage({ id: 'cdirect', content: 'typed' }),
      new AIMessage({ id: 'ca1', content: 'reply' }),
    ]);
    expect(query).toHaveBeenCalledTimes(3);
  } finally {
    query.mockRestore();
  }
  const rows = await backend.messages.listAll(sessionId, {});
  expect(rows.map((row) => [row.id, row.content])).toEqual([
    ['cu0', 'question'],
    ['ca0', 'answer'],
    ['cdirect', 'typed'],
    ['ca1', 'reply'],
  ]);
  expect((await backend.sessions.get(sessionId, {}))?.messageCount).toBe(4);
});

it('consecutive puts after this process own puts keep every row and the count', async () => {
  const saver = new PrismaCheckpointSaver(opened.db, { onRootCheckpoint: messageProjectionHook });
  const { sessionId, threadId, parentId, history } = await sessionWithHistory(saver, 'd');
  let parent = parentId;
  const messages: BaseMessage[] = [...history];
  const query = jest.spyOn(pg.Client.prototype, 'query');
  try {
    for (let i = 1; i <= 40; i += 1) {
      messages.push(
        i % 2 === 1
          ? new HumanMessage({ id: `du${i}`, content: `q${i}` })
          : new AIMessage({ id: `da${i}`, content: `a${i}` }),
      );
      parent = await putWith(saver, threadId, parent, [...messages]);
    }
    // One statement per put: no read, no refused write, no transaction.
    expect(query).toHaveBeenCalledTimes(40);
  } finally {
    query.mockRestore();
  }
  const rows = await backend.messages.listAll(sessionId, {});
  expect(rows.map((row) => row.id)).toEqual(messages.map((message) => message.id));
  expect(rows.map((row) => row.content)).toEqual(messages.map((message) => message.content));
  expect((await backend.sessions.get(sessionId, {}))?.messageCount).toBe(42);
});

it('a message this process inserted between two puts joins what it remembers: the next put is one statement', async () => {
  // The backend's own saver and message store share one pool, as in the server.
  const saver = backend.checkpointer as PrismaCheckpointSaver;
  const { sessionId, threadId, parentId, history } = await sessionWithHistory(saver, 'e');
  await backend.messages.create({ id: 'edirect', sessionId, role: 'user', content: 'typed' });
  const query = jest.spyOn(pg.Client.prototype, 'query');
  try {
    await putWith(saver, threadId, parentId, [
      ...history,
      new HumanMessage({ id: 'edirect', content: 'typed' }),
      new AIMessage({ id: 'ea1', content: 'reply' }),
    ]);
    expect(query).toHaveBeenCalledTimes(1);
  } finally {
    query.mockRestore();
  }
  const rows = await backend.messages.listAll(sessionId, {});
  expect(rows.map((row) => [row.id, row.content])).toEqual([
    ['eu0', 'question'],
    ['ea0', 'answer'],
    ['edirect', 'typed'],
    ['ea1', 'reply'],
  ]);
  expect((await backend.sessions.get(sessionId, {}))?.messageCount).toBe(4);
});

it('a message inserted by this process while another writer got in between is not remembered', async () => {
  const saver = backend.checkpointer as PrismaCheckpointSaver;
  const { sessionId, threadId, parentId, history } = await sessionWithHistory(saver, 'f');
  // Another node's message first (its own pool), then this process's: the remembered version
  // is not the one this process's insert saw.
  const other = createPrismaStorage({
    provider: 'postgresql',
    url: database.provider === 'postgresql' ? database.url : '',
  });
  await other.initialize();
  try {
    await other.messages.create({ id: 'fother', sessionId, role: 'user', content: 'other' });
  } finally {
    await other.close();
  }
  await backend.messages.create({ id: 'fdirect', sessionId, role: 'user', content: 'typed' });
  await putWith(saver, threadId, parentId, [
    ...history,
    new HumanMessage({ id: 'fother', content: 'other' }),
    new HumanMessage({ id: 'fdirect', content: 'typed' }),
    new AIMessage({ id: 'fa1', content: 'reply' }),
  ]);
  const rows = await backend.messages.listAll(sessionId, {});
  expect(rows.map((row) => [row.id, row.content])).toEqual([
    ['fu0', 'question'],
    ['fa0', 'answer'],
    ['fother', 'other'],
    ['fdirect', 'typed'],
    ['fa1', 'reply'],
  ]);
  expect((await backend.sessions.get(sessionId, {}))?.messageCount).toBe(5);
});

it('a new session whose first message this process inserted: the first put is one statement', async () => {
  const saver = backend.checkpointer as PrismaCheckpointSaver;
  const session = await backend.sessions.create({ title: 'first message' }, {});
  await backend.messages.create({ id: 'gu0', sessionId: session.id, role: 'user', content: 'q' });
  const query = jest.spyOn(pg.Client.prototype, 'query');
  try {
    await putWith(saver, session.threadId, undefined, [
      new HumanMessage({ id: 'gu0', content: 'q' }),
      new AIMessage({ id: 'ga0', content: 'a' }),
    ]);
    expect(query).toHaveBeenCalledTimes(1);
  } finally {
    query.mockRestore();
  }
  const rows = await backend.messages.listAll(session.id, {});
  expect(rows.map((row) => [row.id, row.content])).toEqual([
    ['gu0', 'q'],
    ['ga0', 'a'],
  ]);
  expect((await backend.sessions.get(session.id, {}))?.messageCount).toBe(2);
});
