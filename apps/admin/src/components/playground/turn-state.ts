import type { AgentEventEnvelope, AgentEventOf } from '@cognition/client';

/** A tool call of a turn with its arguments and, once it ran, its result. */
export interface ToolCallView {
  id: string;
  name: string;
  args: Record<string, unknown>;
  output: string | null;
  exitCode: number | null;
}

/**
 * One span of a turn's timeline, in epoch milliseconds from the events' `at` (when the server
 * emitted them, stored with them: a past run replayed reads the same as one followed live): a
 * model call, a tool call (`execute` is a sandbox exec), the wait for a
 * person's decision, or the downtime before a resumed attempt. `endedAt` null: still open.
 */
export interface TimelineSpan {
  kind: 'model' | 'tool' | 'decision' | 'downtime';
  label: string;
  startedAt: number;
  endedAt: number | null;
  /** 0 for the first attempt, n for the n-th resumption after a crash. */
  attempt: number;
  /** The tool call's id (`tool` spans). */
  callId?: string;
  /** A tool call held for a person's decision: it starts when the run goes on. */
  held?: true;
}

/** One turn of the playground: the user's message and what its run did, folded from events. */
export interface TurnState {
  runId: string;
  content: string;
  /** Answer text and tool calls in the order they arrived, each with its event id. */
  pieces: (
    { id: string; kind: 'text'; text: string } | { id: string; kind: 'tool'; callId: string }
  )[];
  tools: Record<string, ToolCallView>;
  timeline: TimelineSpan[];
  /** The run's pause for a decision, with the id of its `interrupt` event (null: not paused). */
  interrupt: { eventId: string; event: AgentEventOf<'interrupt'> } | null;
  usage: AgentEventOf<'usage'> | null;
  /** null while running; `completed`, `aborted`, `failed: …` or `waiting for a decision`. */
  outcome: string | null;
  attempt: number;
  /** When the last event was emitted: where a downtime before a resume starts. */
  lastAt: number | null;
}

export function newTurn(runId: string, content: string): TurnState {
  return {
    runId,
    content,
    pieces: [],
    tools: {},
    timeline: [],
    interrupt: null,
    usage: null,
    outcome: null,
    attempt: 0,
    lastAt: null,
  };
}

export const answerOfTurn = (turn: TurnState): string =>
  turn.pieces.map((p) => (p.kind === 'text' ? p.text : '')).join('');

/** Closes every open span at `at`. */
const closeAll = (spans: TimelineSpan[], at: number): TimelineSpan[] =>
  spans.map((s) => (s.endedAt === null ? { ...s, endedAt: at } : s));

/** Closes the open spans of one kind at `at`. */
const closeKind = (spans: TimelineSpan[], kind: TimelineSpan['kind'], at: number) =>
  spans.map((s) => (s.endedAt === null && s.kind === kind ? { ...s, endedAt: at } : s));

/** Without the calls still held for a decision: a run ended while paused never ran them. */
const unheld = (spans: TimelineSpan[]) => spans.filter((s) => !s.held);

/** Opens a model call at `at` unless something (a model or tool call) is still open. */
function openModelCall(turn: TurnState, at: number): TimelineSpan[] {
  if (turn.timeline.some((s) => s.endedAt === null && (s.kind === 'model' || s.kind === 'tool')))
    return turn.timeline;
  const calls = turn.timeline.filter((s) => s.kind === 'model').length;
  return [
    ...turn.timeline,
    {
      kind: 'model',
      label: `model call ${calls + 1}`,
      startedAt: at,
      endedAt: null,
      attempt: turn.attempt,
    },
  ];
}

/**
 * Folds one event of the turn's run at its emission time `at`, so durations are the server's,
 * whether the events arrive as they happen or replayed in one burst (a page opened late, a past
 * run). `reconnected` and `queued` are written for the stream, not stored: they move no clock.
 */
export function turnReducer(turn: TurnState, envelope: AgentEventEnvelope): TurnState {
  const { id, event } = envelope;
  if (event.type === 'reconnected' || event.type === 'queued') return turn;
  const at = Date.parse(envelope.at);
  // Any event after a pause means the run goes on (decided or aborted): the wait ends here.
  const goesOn = turn.interrupt !== null && event.type !== 'interrupt';
  // Held calls start with the run's first step after the decision (not a reconnect, nor the
  // `idle` and terminal events of an abort).
  const release =
    event.type === 'tool_call' ||
    event.type === 'tool_result' ||
    event.type === 'token' ||
    (event.type === 'status' && event.status === 'thinking');
  const base: TurnState = {
    ...turn,
    lastAt: at,
    ...(goesOn
      ? {
          interrupt: null,
          outcome: null,
          timeline: closeKind(turn.timeline, 'decision', at),
        }
      : {}),
  };
  if (release && base.timeline.some((s) => s.held))
    base.timeline = base.timeline.map(({ held, ...s }) => (held ? { ...s, startedAt: at } : s));
  switch (event.type) {
    case 'status':
      return event.status === 'thinking' ? { ...base, timeline: openModelCall(base, at) } : base;
    case 'token':
      return {
        ...base,
        timeline: openModelCall(base, at),
        pieces: [...base.pieces, { id, kind: 'text', text: event.content }],
      };
    case 'tool_call': {
      const known = base.tools[event.id];
      if (known)
        // An edited call is announced again with its new arguments: same call, same span.
        return { ...base, tools: { ...base.tools, [event.id]: { ...known, args: event.args } } };
      const label = event.name === 'execute' ? `sandbox exec (${event.name})` : event.name;
      return {
        ...base,
        pieces: [...base.pieces, { id, kind: 'tool', callId: event.id }],
        tools: {
          ...base.tools,
          [event.id]: {
            id: event.id,
            name: event.name,
            args: event.args,
            output: null,
            exitCode: null,
          },
        },
        timeline: [
          ...closeKind(base.timeline, 'model', at),
          {
            kind: 'tool',
            label,
            startedAt: at,
            endedAt: null,
            attempt: base.attempt,
            callId: event.id,
          },
        ],
      };
    }
    case 'tool_result': {
      const call = base.tools[event.tool_call_id];
      const timeline = base.timeline.map((s) =>
        s.kind === 'tool' && s.callId === event.tool_call_id && s.endedAt === null
          ? { ...s, endedAt: at }
          : s,
      );
      const next = {
        ...base,
        timeline,
        tools: call
          ? {
              ...base.tools,
              [call.id]: { ...call, output: event.output, exitCode: event.exit_code },
            }
          : base.tools,
      };
      // The last result of a batch goes back to the model.
      return { ...next, timeline: openModelCall(next, at) };
    }
    case 'usage':
      return { ...base, usage: event };
    case 'interrupt':
      return {
        ...base,
        interrupt: { eventId: id, event },
        outcome: 'waiting for a decision',
        // The calls it asks about run only after the decision: their spans follow the wait.
        timeline: [
          ...closeKind(
            base.timeline.filter((s) => !(s.kind === 'tool' && s.endedAt === null)),
            'model',
            at,
          ),
          {
            kind: 'decision',
            label: 'waiting for a decision',
            startedAt: at,
            endedAt: null,
            attempt: base.attempt,
          },
          ...base.timeline
            .filter((s) => s.kind === 'tool' && s.endedAt === null)
            .map((s): TimelineSpan => ({ ...s, held: true })),
        ],
      };
    case 'resumed':
      // A new process took the run up after a crash: what the cut-off step streamed after the
      // mark is void (event ids sort in emission order), the time since the last event is downtime.
      return {
        ...base,
        attempt: event.attempt,
        pieces: base.pieces.filter((p) => p.id <= event.void_after_event_id),
        timeline: [
          ...closeAll(base.timeline, turn.lastAt ?? at),
          {
            kind: 'downtime',
            label: `downtime before attempt ${event.attempt + 1}`,
            startedAt: turn.lastAt ?? at,
            endedAt: at,
            attempt: event.attempt,
          },
        ],
      };
    case 'done':
      return { ...base, outcome: 'completed', timeline: closeAll(unheld(base.timeline), at) };
    case 'error':
      return {
        ...base,
        outcome: event.code === 'ABORTED' ? 'aborted' : `failed: ${event.message}`,
        timeline: closeAll(unheld(base.timeline), at),
      };
    case 'planning':
    case 'step_complete':
    case 'delegation':
    case 'artifact':
    case 'compaction':
    case 'graph': // a langgraph.json graph's stream part; the Playground chats with agents
      return base;
  }
}
