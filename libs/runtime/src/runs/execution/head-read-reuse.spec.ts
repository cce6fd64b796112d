import { emptyCheckpoint, MemorySaver, uuid6 } from '@langchain/langgraph-checkpoint';
import type { Checkpoint } from '@langchain/langgraph-checkpoint';
import { HeadReadReuse } from './head-read-reuse';

const head = { configurable: { thread_id: 't' } };

async function saverWithHead(): Promise<{ inner: MemorySaver; checkpoint: Checkpoint }> {
  const inner = new MemorySaver();
  const checkpoint: Checkpoint = {
    ...emptyCheckpoint(),
    id: uuid6(-1),
    channel_values: { messages: ['a'] },
    channel_versions: { messages: 1 },
  };
  await inner.put({ configurable: { thread_id: 't', checkpoint_ns: '' } }, checkpoint, {
    source: 'input',
    step: -1,
    parents: {},
  });
  return { inner, checkpoint };
}

it('hands the first head read to the next one, once, without reading again', async () => {
  const { inner, checkpoint } = await saverWithHead();
  const getTuple = jest.spyOn(inner, 'getTuple');
  const saver = new HeadReadReuse(inner);
  const first = await saver.getTuple(head);
  const second = await saver.getTuple(head);
  expect(getTuple).toHaveBeenCalledTimes(1);
  expect(second?.checkpoint.id).toBe(checkpoint.id);
  expect(second?.checkpoint.channel_values).toEqual(first?.checkpoint.channel_values);
  // What the first reader does to its versions does not reach the second.
  if (!first) throw new Error('no head');
  first.checkpoint.channel_versions['messages'] = 99;
  expect(second?.checkpoint.channel_versions['messages']).toBe(1);
  await saver.getTuple(head);
  expect(getTuple).toHaveBeenCalledTimes(2);
});

it('reads again after a write through it', async () => {
  const { inner, checkpoint } = await saverWithHead();
  const getTuple = jest.spyOn(inner, 'getTuple');
  const saver = new HeadReadReuse(inner);
  await saver.getTuple(head);
  await saver.putWrites(
    { configurable: { thread_id: 't', checkpoint_ns: '', checkpoint_id: checkpoint.id } },
    [['messages', 'b']],
    'task',
  );
  const second = await saver.getTuple(head);
  expect(getTuple).toHaveBeenCalledTimes(2);
  expect(second?.pendingWrites).toEqual([['task', 'messages', 'b']]);
});

it('does not keep a head with pending writes, nor a read of a given checkpoint', async () => {
  const { inner, checkpoint } = await saverWithHead();
  await inner.putWrites(
    { configurable: { thread_id: 't', checkpoint_ns: '', checkpoint_id: checkpoint.id } },
    [['messages', 'b']],
    'task',
  );
  const getTuple = jest.spyOn(inner, 'getTuple');
  const saver = new HeadReadReuse(inner);
  await saver.getTuple(head);
  await saver.getTuple(head);
  expect(getTuple).toHaveBeenCalledTimes(2);

  const other = new HeadReadReuse(inner);
  await other.getTuple({ configurable: { thread_id: 't', checkpoint_id: checkpoint.id } });
  await other.getTuple({ configurable: { thread_id: 't', checkpoint_id: checkpoint.id } });
  expect(getTuple).toHaveBeenCalledTimes(4);
});

it('hands on that a new thread has no checkpoint', async () => {
  const inner = new MemorySaver();
  const getTuple = jest.spyOn(inner, 'getTuple');
  const saver = new HeadReadReuse(inner);
  expect(await saver.getTuple(head)).toBeUndefined();
  expect(await saver.getTuple(head)).toBeUndefined();
  expect(getTuple).toHaveBeenCalledTimes(1);
});
