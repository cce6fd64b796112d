import type { Message, Run } from '@cognition/contracts';
import { answerFromMessages, isTerminalState, streamResponses, taskState } from './task-mapping';

/** Issue 30: how our runs read as A2A tasks. */
describe('A2A task mapping', () => {
  it('maps every run status to a task state', () => {
    expect(
      (
        [
          'pending',
          'queued',
          'running',
          'requires_action',
          'completed',
          'failed',
          'aborted',
          'interrupted',
        ] as const
      ).map((status) => [status, taskState(status)]),
    ).toEqual([
      ['pending', 'TASK_STATE_SUBMITTED'],
      ['queued', 'TASK_STATE_SUBMITTED'],
      ['running', 'TASK_STATE_WORKING'],
      ['requires_action', 'TASK_STATE_INPUT_REQUIRED'],
      ['completed', 'TASK_STATE_COMPLETED'],
      ['failed', 'TASK_STATE_FAILED'],
      ['aborted', 'TASK_STATE_CANCELED'],
      ['interrupted', 'TASK_STATE_FAILED'],
    ]);
    expect(isTerminalState('TASK_STATE_INPUT_REQUIRED')).toBe(false);
    expect(isTerminalState('TASK_STATE_CANCELED')).toBe(true);
  });

  const run = { id: 'run_1', sessionId: 's1', inputMessageId: 'u2' } as Run;
  const message = (id: string, role: Message['role'], content: string) =>
    ({ id, role, content }) as Message;

  it("takes a run's answer from its turn only: the last assistant text before the next user message", () => {
    const messages = [
      message('u1', 'user', 'one'),
      message('a1', 'assistant', 'first answer'),
      message('u2', 'user', 'two'),
      message('a2', 'assistant', 'let me look'),
      message('t2', 'tool', 'output'),
      message('a3', 'assistant', 'second answer'),
      message('u3', 'user', 'three'),
      message('a4', 'assistant', 'third answer'),
    ];
    expect(answerFromMessages(run, messages)).toBe('second answer');
    expect(answerFromMessages({ ...run, inputMessageId: 'gone' }, messages)).toBeNull();
  });

  it('streams tokens as appended chunks and ends with the whole answer and the final state', () => {
    const envelope = (event: object) =>
      ({ id: 'run_1:1', sessionId: 's1', runId: 'run_1', event }) as never;
    const [chunk] = streamResponses(run, envelope({ type: 'token', content: 'Hel' })) as {
      artifactUpdate?: { taskId: string; contextId: string; append: boolean; artifact: object };
    }[];
    expect(chunk?.artifactUpdate).toMatchObject({
      taskId: 'run_1',
      contextId: 's1',
      append: true,
      artifact: { parts: [{ text: 'Hel' }] },
    });
    const done = streamResponses(
      run,
      envelope({ type: 'done', assistant_data: { content: 'Hello' } }),
    ) as { artifactUpdate?: { append: boolean }; statusUpdate?: { status: { state: string } } }[];
    expect(done[0]?.artifactUpdate?.append).toBe(false);
    expect(done[1]?.statusUpdate?.status.state).toBe('TASK_STATE_COMPLETED');
    const aborted = streamResponses(
      run,
      envelope({ type: 'error', code: 'ABORTED', message: 'stopped' }),
    ) as { statusUpdate?: { status: { state: string } } }[];
    expect(aborted[0]?.statusUpdate?.status.state).toBe('TASK_STATE_CANCELED');
    expect(streamResponses(run, envelope({ type: 'usage' }))).toEqual([]);
  });
});
