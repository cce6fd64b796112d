import { Badge, Card, Code, Text } from '@radix-ui/themes';
import type { ReactNode } from 'react';
import Markdown from 'react-markdown';
import { CopyId } from '../common/copy-id';
import { StatusBadge } from '../common/ui';
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
        <Text size="2">
          Tool <Code variant="ghost">{call.name}</Code> · {state}
        </Text>
      </summary>
      <Text as="p" size="1" color="gray">
        Arguments
      </Text>
      <pre>{JSON.stringify(call.args, null, 2)}</pre>
      {call.output !== null && (
        <>
          <Text as="p" size="1" color="gray">
            Result
          </Text>
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
    <Card asChild className="turn">
      <li aria-busy={turn.outcome === null}>
        <div className="message user">
          <Badge highContrast color="indigo">
            you
          </Badge>
          <Text as="p" weight="medium" my="2">
            {turn.content}
          </Text>
        </div>
        <div className="message assistant">
          <Badge highContrast color="gray">
            agent
          </Badge>{' '}
          <StatusBadge status={turn.outcome ?? 'running'} />
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
          <Text as="p" size="1" color="gray" className="run-id" my="2">
            Run <CopyId id={turn.runId} what="run id" />
          </Text>
          <RunTimeline turn={turn} now={now} />
          {children}
        </div>
      </li>
    </Card>
  );
}
