import type { Message } from '@ag-ui/core';
import { EventType } from '@ag-ui/core';
import type { AgentEvent, AgentEventEnvelope } from '@cognition/contracts';
import { AgUiTranslator } from './ag-ui-events';

const RUN = 'run_1';
let seq = 0;
const envelope = (event: AgentEvent): AgentEventEnvelope =>
  ({
    id: `${RUN}:${String(++seq).padStart(9, '0')}`,
    event,
  }) as AgentEventEnvelope;

/** The snapshots a translator gives for `events`, in order. */
function snapshots(events: AgentEvent[], client: Message[] = []): unknown[] {
  seq = 0;
  const translator = new AgUiTranslator('t', 'r', new Set(), client);
  return events
    .flatMap((event) => translator.translate(envelope(event)))
    .filter((e) => e.type === EventType.MESSAGES_SNAPSHOT)
    .map((e) => (e as unknown as { messages: unknown }).messages);
}

describe('AgUiTranslator after a crash (issue 30)', () => {
  const user: Message = { id: 'u1', role: 'user', content: 'hi' };

  it('takes back what came after void_after_event_id and keeps what came before', () => {
    const taken = snapshots(
      [
        { type: 'tool_call', id: 'c1', name: 'ls', args: {} },
        { type: 'tool_result', tool_call_id: 'c1', output: 'a.txt', exit_code: 0 },
        { type: 'token', content: 'part' },
        { type: 'token', content: 'ial' },
        { type: 'resumed', run_id: RUN, void_after_event_id: `${RUN}:000000002`, attempt: 1 },
        { type: 'token', content: 'whole answer' },
      ] as AgentEvent[],
      [user],
    );
    expect(taken).toEqual([
      [
        user,
        {
          id: 'c1',
          role: 'assistant',
          toolCalls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{}' } }],
        },
        { id: `tool-${RUN}:000000002`, role: 'tool', toolCallId: 'c1', content: 'a.txt' },
      ],
    ]);
  });

  it('replaces a message of the run the client posted back, and sends no snapshot when nothing was void', () => {
    const posted: Message = { id: `msg-${RUN}:000000001`, role: 'assistant', content: 'par' };
    expect(
      snapshots(
        [
          { type: 'token', content: 'partial' },
          { type: 'resumed', run_id: RUN, void_after_event_id: `${RUN}:000000000`, attempt: 1 },
        ] as AgentEvent[],
        [user, posted],
      ),
    ).toEqual([[user]]);
    expect(
      snapshots([
        { type: 'token', content: 'kept' },
        { type: 'resumed', run_id: RUN, void_after_event_id: `${RUN}:000000001`, attempt: 1 },
      ] as AgentEvent[]),
    ).toEqual([]);
  });
});
