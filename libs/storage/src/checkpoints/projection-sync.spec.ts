import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import { projectCheckpointMessages } from './projection';
import { checkpointMessages, isLatestCheckpointId, planProjection } from './projection-sync';

const project = (ids: string[]) =>
  projectCheckpointMessages(
    's1',
    ids.map((id, i) =>
      i % 2 === 0 ? new HumanMessage({ id, content: id }) : new AIMessage({ id, content: id }),
    ),
  );

describe('checkpointMessages', () => {
  it('reads the messages channel and coerces message-like entries', () => {
    const checkpoint = {
      ...emptyCheckpoint(),
      channel_values: {
        messages: [
          new HumanMessage({ id: 'h', content: 'hi' }),
          { role: 'assistant', content: 'yo', id: 'a' },
          42,
        ],
      },
    };
    const messages = checkpointMessages(checkpoint);
    expect(messages.map((m) => [m.getType(), m.id, m.content])).toEqual([
      ['human', 'h', 'hi'],
      ['ai', 'a', 'yo'],
    ]);
  });

  it('treats a checkpoint without messages as an empty thread', () => {
    expect(checkpointMessages(emptyCheckpoint())).toEqual([]);
    expect(checkpointMessages({ channel_values: { messages: 'not a list' } })).toEqual([]);
  });
});

describe('planProjection', () => {
  it('places checkpoint messages first and keeps pending inputs after them in order', () => {
    const plan = planProjection(
      [
        { id: 'h1', pending: false },
        { id: 'p1', pending: true },
        { id: 'p2', pending: true },
      ],
      project(['h1', 'a1']),
    );
    expect(
      plan.rows.map((row) => [row.kind, row.kind === 'pending' ? row.id : row.message.id, row.seq]),
    ).toEqual([
      ['projected', 'h1', 0],
      ['projected', 'a1', 1],
      ['pending', 'p1', 2],
      ['pending', 'p2', 3],
    ]);
    expect(plan.deleteIds).toEqual([]);
    expect(plan.messageCount).toBe(4);
  });

  it('adopts a pending input the checkpoint now contains and deletes dropped projected rows', () => {
    const plan = planProjection(
      [
        { id: 'h1', pending: false },
        { id: 'a1', pending: false },
        { id: 'p1', pending: true },
      ],
      project(['h1', 'p1']),
    );
    expect(
      plan.rows.map((row) => (row.kind === 'projected' ? [row.message.id, row.existed] : row.id)),
    ).toEqual([
      ['h1', true],
      ['p1', true],
    ]);
    expect(plan.deleteIds).toEqual(['a1']);
    expect(plan.messageCount).toBe(2);
  });
});

describe('isLatestCheckpointId', () => {
  it('accepts the first checkpoint and any id not older than the current latest', () => {
    expect(isLatestCheckpointId('b', null)).toBe(true);
    expect(isLatestCheckpointId('b', 'a')).toBe(true);
    expect(isLatestCheckpointId('b', 'b')).toBe(true);
    expect(isLatestCheckpointId('a', 'b')).toBe(false);
  });
});
