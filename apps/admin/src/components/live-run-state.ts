import type { AgentEvent } from '@cognition/client';

/** What the live view shows of a run, folded from its events. */
export interface LiveRunState {
  status: string;
  text: string;
  /** One line per tool call / result (and context compaction), in order. */
  tools: string[];
  finished: boolean;
  /** `completed`, `failed: <message>` or `aborted`. */
  outcome: string;
}

export const initialLiveRun: LiveRunState = {
  status: 'connecting',
  text: '',
  tools: [],
  finished: false,
  outcome: '',
};

export function liveRunReducer(state: LiveRunState, event: AgentEvent): LiveRunState {
  switch (event.type) {
    case 'token':
      return { ...state, text: state.text + event.content };
    case 'status':
      return { ...state, status: event.status };
    case 'tool_call':
      return { ...state, tools: [...state.tools, `→ ${event.name}`] };
    case 'tool_result':
      return { ...state, tools: [...state.tools, `← exit ${event.exit_code}`] };
    case 'compaction':
      return {
        ...state,
        tools: [
          ...state.tools,
          `⋯ context compacted: ${event.summarized_messages} messages ${event.strategy === 'summarize' ? 'summarized' : 'dropped'} (${event.before_tokens} → ${event.after_tokens} tokens)`,
        ],
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
    case 'reconnected':
      return state;
  }
}
