import type { Message } from '@cognition/contracts';
import type { StorageBackend } from '@cognition/storage';
import { checkpointMessages, projectCheckpointMessages, StorageError } from '@cognition/storage';
import { nextCheckpointId, putMessagesCheckpoint } from '@cognition/storage/testing';
import type { BaseMessage } from '@langchain/core/messages';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import Sqlite from 'better-sqlite3';
import type { OpenedDatabase } from '../db/db';
import { openSqlite } from '../db/db';
import { PrismaCheckpointSaver } from '../langgraph/checkpoint-saver';
import { projectOnSqlite } from './projection';
import { ALWAYS } from './projection-plan';
import { createPrismaStorage } from '../prisma-storage';
import type { TestDatabase } from '../testing/test-db';
import { createTestDatabase } from '../testing/test-db';

/**
 * One turn's writes, in the order the runtime makes them: the user message row, the run, the
 * input checkpoint (the graph's first step), the answer checkpoint, the run's completion.
 * Each test stops the turn at one point (as a crash would), reopens a NEW backend on the same
 * file, and proves the projection equals the latest checkpoint (plus accepted, not yet
 * checkpointed inputs) and messageCount equals the rows.
 */
const CRASH = new Error('simulated crash');

let database: TestDatabase;
let backends: StorageBackend[];
let opened: OpenedDatabase[];

beforeEach(async () => {
  database = await createTestDatabase('sqlite');
  backends = [];
  opened = [];
});
afterEach(async () => {
  for (const backend of backends) await backend.close();
  for (const db of opened) await db.close();
  await database.cleanup();
});

async function startBackend(): Promise<StorageBackend> {
  if (database.provider !== 'sqlite') throw new Error('sqlite only');
  const backend = createPrismaStorage({ provider: 'sqlite', path: database.path });
  backends.push(backend);
  await backend.initialize();
  return backend;
}

/** A saver on its own connection whose projection hook fails before or after writing. */
async function crashingSaver(
  when: 'before-projection' | 'after-projection',
): Promise<PrismaCheckpointSaver> {
  if (database.provider !== 'sqlite') throw new Error('sqlite only');
  const db = await openSqlite(database.path);
  opened.push(db);
  return new PrismaCheckpointSaver(db.db, {
    onRootCheckpoint: {
      sqlite: (session, { threadId, checkpointId, checkpoint }) => {
        if (when === 'before-projection') throw CRASH;
        projectOnSqlite(session, {
          threadId,
          checkpointId,
          messages: checkpointMessages(checkpoint),
          gate: ALWAYS,
        });
        throw CRASH;
      },
      postgresql: () => Promise.reject(new Error('sqlite only')),
    },
  });
}

async function putWith(
  saver: PrismaCheckpointSaver,
  threadId: string,
  messages: BaseMessage[],
): Promise<void> {
  await saver.put(
    { configurable: { thread_id: threadId, checkpoint_ns: '' } },
    {
      ...emptyCheckpoint(),
      id: nextCheckpointId(),
      channel_values: { messages },
      channel_versions: { messages: 9 },
    },
    { source: 'loop', step: messages.length, parents: {} },
    { messages: 9 },
  );
}

function comparable(
  messages: readonly Pick<Message, 'id' | 'role' | 'content' | 'parentId'>[],
): string[] {
  return messages.map((m) => `${m.id}|${m.role}|${m.content}|${m.parentId ?? ''}`);
}

/**
 * The invariant after any crash: rows = projection of the latest root checkpoint followed by the
 * direct rows it does not contain (exactly `pending`), and messageCount = number of rows.
 */
async function expectConsistent(
  backend: StorageBackend,
  sessionId: string,
  pending: string[],
): Promise<Message[]> {
  const session = await backend.sessions.get(sessionId, {});
  if (!session) throw new Error('session vanished');
  const tuple = await backend.checkpointer.getTuple({
    configurable: { thread_id: session.threadId, checkpoint_ns: '' },
  });
  const projected = projectCheckpointMessages(
    sessionId,
    tuple ? checkpointMessages(tuple.checkpoint) : [],
  );
  const rows = await backend.messages.listAll(sessionId, {});
  expect(comparable(rows.slice(0, projected.length))).toEqual(comparable(projected));
  expect(rows.slice(projected.length).map((m) => m.id)).toEqual(pending);
  expect(session.messageCount).toBe(rows.length);
  return rows;
}

async function beginTurn(backend: StorageBackend): Promise<{
  sessionId: string;
  threadId: string;
  user: HumanMessage;
  answer: AIMessage;
  runId: string;
}> {
  const session = await backend.sessions.create({ title: 'crash' }, {});
  const first = [
    new HumanMessage({ id: 'u0', content: 'earlier question' }),
    new AIMessage({ id: 'a0', content: 'earlier answer' }),
  ];
  await putMessagesCheckpoint(backend, session.threadId, first);
  const user = new HumanMessage({ id: 'u1', content: 'new question' });
  await backend.messages.create({
    id: 'u1',
    sessionId: session.id,
    role: 'user',
    content: 'new question',
  });
  const { run } = await backend.runs.create({
    sessionId: session.id,
    status: 'running',
    inputMessageId: 'u1',
  });
  return {
    sessionId: session.id,
    threadId: session.threadId,
    user,
    answer: new AIMessage({ id: 'a1', content: 'new answer' }),
    runId: run.id,
  };
}

const history = [
  new HumanMessage({ id: 'u0', content: 'earlier question' }),
  new AIMessage({ id: 'a0', content: 'earlier answer' }),
];

describe('crash recovery of a turn (SQLite, reopened on the same file)', () => {
  it('after the user message insert: the input stays as a pending row', async () => {
    const turn = await beginTurn(await startBackend());
    const reopened = await startBackend();
    const rows = await expectConsistent(reopened, turn.sessionId, ['u1']);
    expect(rows.map((m) => m.id)).toEqual(['u0', 'a0', 'u1']);
    expect((await reopened.runs.listActive()).map((r) => r.id)).toEqual([turn.runId]);
  });

  it.each(['before-projection', 'after-projection'] as const)(
    'inside the checkpoint put, hook failing %s: neither checkpoint nor rows are stored',
    async (when) => {
      const backend = await startBackend();
      const turn = await beginTurn(backend);
      const before = await backend.checkpointer.getTuple({
        configurable: { thread_id: turn.threadId, checkpoint_ns: '' },
      });
      const saver = await crashingSaver(when);
      let caught: unknown;
      try {
        await putWith(saver, turn.threadId, [...history, turn.user, turn.answer]);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(StorageError);
      expect((caught as StorageError).details.cause).toBe(CRASH);
      const reopened = await startBackend();
      const after = await reopened.checkpointer.getTuple({
        configurable: { thread_id: turn.threadId, checkpoint_ns: '' },
      });
      expect(after?.checkpoint.id).toBe(before?.checkpoint.id);
      const rows = await expectConsistent(reopened, turn.sessionId, ['u1']);
      expect(rows.map((m) => m.id)).not.toContain('a1');
    },
  );

  it('after the checkpoint, before the run update: rows match the checkpoint, the run is left active', async () => {
    const backend = await startBackend();
    const turn = await beginTurn(backend);
    await putMessagesCheckpoint(backend, turn.threadId, [...history, turn.user]);
    await putMessagesCheckpoint(backend, turn.threadId, [...history, turn.user, turn.answer]);
    const reopened = await startBackend();
    const rows = await expectConsistent(reopened, turn.sessionId, []);
    expect(rows.map((m) => m.id)).toEqual(['u0', 'a0', 'u1', 'a1']);
    // Marking it interrupted is the runtime's startup recovery; storage must still list it.
    expect((await reopened.runs.listActive()).map((r) => r.id)).toEqual([turn.runId]);
  });

  it('a lost projection write (checkpoint stored, rows and marker stale) is repaired on reopen', async () => {
    const backend = await startBackend();
    const turn = await beginTurn(backend);
    await putMessagesCheckpoint(backend, turn.threadId, [...history, turn.user, turn.answer]);
    await backend.runs.update(turn.runId, { status: 'completed', finishedAt: new Date() });
    if (database.provider !== 'sqlite') throw new Error('sqlite only');
    const raw = new Sqlite(database.path);
    try {
      // What the turn's rows looked like before its checkpoint was projected.
      raw.prepare("DELETE FROM messages WHERE id = 'a1'").run();
      raw.prepare("UPDATE messages SET source = 'direct', content = 'stale' WHERE id = 'u1'").run();
      raw
        .prepare(
          'UPDATE sessions SET projected_checkpoint_id = NULL, message_count = 7 WHERE id = ?',
        )
        .run(turn.sessionId);
    } finally {
      raw.close();
    }
    const reopened = await startBackend();
    const rows = await expectConsistent(reopened, turn.sessionId, []);
    expect(rows.map((m) => `${m.id}:${m.content}`)).toEqual([
      'u0:earlier question',
      'a0:earlier answer',
      'u1:new question',
      'a1:new answer',
    ]);
  });

  it('a message count that drifted from the rows alone is repaired on reopen', async () => {
    const backend = await startBackend();
    const turn = await beginTurn(backend);
    await backend.sessions.updateMessageCount(turn.sessionId, 5);
    const reopened = await startBackend();
    await expectConsistent(reopened, turn.sessionId, ['u1']);
  });
});
