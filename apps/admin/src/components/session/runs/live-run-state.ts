import type { AgentEvent, AgentEventEnvelope } from '@cognition/client';

/** What the live view shows of a run, folded from its events. */
export interface LiveRunState {
  status: string;
  /** Answer text and tool lines, each with the id of the event that produced it. */
  pieces: { id: string; kind: 'text' | 'tool'; text: string }[];
  finished: boolean;
  /** `completed`, `failed: <message>`, `aborted` or `waiting for a decision`. */
  outcome: string;
  /** How many times a new server process took the run up again after a crash. */
  resumes: number;
}

export const initialLiveRun: LiveRunState = {
  status: 'connecting',
  pieces: [],
  finished: false,
  outcome: '',
  resumes: 0,
};

export const answerOf = (state: LiveRunState): string =>
  state.pieces
    .filter((p) => p.kind === 'text')
    .map((p) => p.text)
    .join('');

export const toolLinesOf = (state: LiveRunState): string[] =>
  state.pieces.filter((p) => p.kind === 'tool').map((p) => p.text);

type ToolEvent = Extract<
  AgentEvent,
  { type: 'tool_call' | 'tool_result' | 'artifact' | 'compaction' }
>;

function toolLine(event: ToolEvent): string {
  switch (event.type) {
    case 'tool_call':
      return `→ ${event.name}`;
    case 'tool_result':
      return `← exit ${event.exit_code}`;
    case 'artifact':
      return `✎ ${event.name} v${event.version} (${event.action})`;
    case 'compaction':
      return `⋯ context compacted: ${event.summarized_messages} messages ${event.strategy === 'summarize' ? 'summarized' : 'dropped'} (${event.before_tokens} → ${event.after_tokens} tokens)`;
  }
}

export function liveRunReducer(
  state: LiveRunState,
  { id, event }: AgentEventEnvelope,
): LiveRunState {
  switch (event.type) {
    case 'token':
      return { ...state, pieces: [...state.pieces, { id, kind: 'text', text: event.content }] };
    case 'status':
      return { ...state, status: event.status };
    case 'tool_call':
    case 'tool_result':
    case 'artifact':
    case 'compaction':
      return {
        ...state,
        pieces: [...state.pieces, { id, kind: 'tool', text: toolLine(event) }],
      };
    case 'queued':
      return {
        ...state,
        pieces: [
          ...state.pieces,
          { id, kind: 'tool', text: `⏸ waiting behind ${event.ahead} run(s) of this session` },
        ],
      };
    case 'resumed':
      // What the cut-off step streamed after the mark is void: the resumed step produces it again.
      // Event ids sort in emission order within a session.
      return {
        ...state,
        resumes: event.attempt,
        pieces: state.pieces.filter((piece) => piece.id <= event.void_after_event_id),
      };
    case 'interrupt':
      // The run paused for a person's decision: its stream ends here until it is resumed.
      return {
        ...state,
        pieces: [
          ...state.pieces,
          {
            id,
            kind: 'tool',
            text: `⏸ waiting for a decision on ${event.tool_calls.map((c) => c.name).join(', ')}`,
          },
        ],
        finished: true,
        outcome: 'waiting for a decision',
      };
    case 'done':
      return { ...state, finished: true, outcome: 'completed' };
    case 'error':
      return {
        ...state,
        finished: true,
        outcome: event.code === 'ABORTED' ? 'aborted' : `failed: ${event.message}`,
      };
    case 'planning':
    case 'step_complete':
    case 'delegation':
    case 'usage':
    case 'graph':
    case 'reconnected':
      return state;
  }
}
