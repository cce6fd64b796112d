import { Button, Card, Code, Text } from '@radix-ui/themes';
import type { AgentEventEnvelope } from '@cognition/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useSubscription } from '@trpc/tanstack-react-query';
import { useReducer } from 'react';
import { errorMessage, useTRPC } from '../../../trpc';
import { ErrorCallout, StatusBadge } from '../../common/ui';
import { answerOf, initialLiveRun, liveRunReducer, toolLinesOf } from './live-run-state';

/**
 * The active run of a session as it happens: tokens as they arrive, tool calls, the outcome.
 * The subscription resumes after a dropped connection by itself (tRPC puts the last event id back
 * into the input); an abort button stops the run. When it ends, the session's data is refetched.
 */
export function LiveRun({ sessionId, runId }: { sessionId: string; runId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [state, dispatch] = useReducer(liveRunReducer, initialLiveRun);
  const subscription = useSubscription(
    trpc.runs.events.subscriptionOptions(
      { sessionId, runId },
      {
        onData: (tracked) => {
          const envelope: AgentEventEnvelope = tracked.data;
          const { event } = envelope;
          dispatch(envelope);
          if (event.type === 'done' || event.type === 'error') {
            void queryClient.invalidateQueries();
          }
        },
      },
    ),
  );
  const abort = useMutation(trpc.runs.abort.mutationOptions());
  return (
    <Card className="live-run" aria-busy={!state.finished}>
      <Text as="p" size="2">
        Run <Code variant="ghost">{runId}</Code> ·{' '}
        <StatusBadge status={(state.finished ? state.outcome : state.status) ?? ''} />
        {subscription.status === 'connecting' && ' · reconnecting…'}
        {state.resumes > 0 && ` · resumed after a server restart (attempt ${state.resumes})`}
      </Text>
      <output className="stream" aria-live="polite" aria-label="Answer so far">
        {answerOf(state)}
      </output>
      {toolLinesOf(state).length > 0 && (
        <ul className="tools">
          {toolLinesOf(state).map((line, index) => (
            <li key={index}>{line}</li>
          ))}
        </ul>
      )}
      {!state.finished && (
        <Button
          type="button"
          color="red"
          variant="soft"
          onClick={() => abort.mutate({ sessionId })}
          disabled={abort.isPending}
        >
          Abort run
        </Button>
      )}
      {abort.isError && <ErrorCallout>{errorMessage(abort.error)}</ErrorCallout>}
    </Card>
  );
}
