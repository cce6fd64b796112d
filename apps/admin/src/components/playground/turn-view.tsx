import type { ReactNode } from 'react';
import Markdown from 'react-markdown';
import { CopyId } from '../common/copy-id';
import { RunTimeline } from './run-timeline';
import type { ToolCallView, TurnState } from './turn-state';

/** A tool call folded: its name and exit code; open it for the arguments and the result. */
function ToolCall({ call, ended }: { call: ToolCallView; ended: boolean }) {
  const state =
    call.exitCode === null
      ? ended
        ? 'not run'
        : 'not run yet'
      : call.exitCode === 0
        ? 'ok'
        : `exit ${call.exitCode}`;
  return (
    <details className="tool-call">
      <summary>
        Tool <code>{call.name}</code> · {state}
      </summary>
      <p>Arguments</p>
      <pre>{JSON.stringify(call.args, null, 2)}</pre>
      {call.output !== null && (
        <>
          <p>Result</p>
          <pre>{call.output}</pre>
        </>
      )}
    </details>
  );
}

/**
 * One turn: the user's message, then the answer and tool calls in the order they streamed
 * (markdown rendered by react-markdown, which never injects HTML), the outcome, the run
 * timeline, and `children` (the decision form or the abort button while it applies).
 */
export function TurnView({
  turn,
  now,
  children,
}: {
  turn: TurnState;
  now: number;
  children?: ReactNode;
}) {
  // Consecutive text pieces form one markdown block; a tool call splits them.
  const blocks: (
    { kind: 'text'; text: string; id: string } | { kind: 'tool'; callId: string; id: string }
  )[] = [];
  for (const piece of turn.pieces) {
    const last = blocks.at(-1);
    if (piece.kind === 'text' && last?.kind === 'text') last.text += piece.text;
    else blocks.push(piece.kind === 'text' ? { ...piece } : piece);
  }
  return (
    <li className="turn" aria-busy={turn.outcome === null}>
      <div className="message user">
        <strong>you</strong>
        <p>{turn.content}</p>
      </div>
      <div className="message assistant">
        <strong>agent</strong>{' '}
        <span className={`badge ${turn.outcome ?? 'running'}`}>{turn.outcome ?? 'running'}</span>
        {turn.attempt > 0 && ` · resumed after a server restart (attempt ${turn.attempt + 1})`}
        {blocks.map((block) =>
          block.kind === 'text' ? (
            <div key={block.id} className="markdown">
              <Markdown>{block.text}</Markdown>
            </div>
          ) : (
            turn.tools[block.callId] && (
              <ToolCall
                key={block.id}
                call={turn.tools[block.callId] as ToolCallView}
                ended={turn.outcome !== null && turn.interrupt === null}
              />
            )
          ),
        )}
        <p className="run-id">
          Run <CopyId id={turn.runId} what="run id" />
        </p>
        <RunTimeline turn={turn} now={now} />
        {children}
      </div>
    </li>
  );
}
