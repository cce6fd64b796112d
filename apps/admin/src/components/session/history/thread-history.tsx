import { Button, Callout, Flex, Heading } from '@radix-ui/themes';
import type { Session } from '@cognition/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { hrefOf } from '../../../route';
import { errorCode, errorMessage, useTRPC } from '../../../trpc';
import { HistoryTable, historyErrorText } from './history-table';
import { QueryView } from '../../common/states';
import { ErrorCallout } from '../../common/ui';

const PAGE_SIZE = 10;

/**
 * The session's history (its thread's checkpoints) with rewind — carrying the version the page
 * shows, so a session changed meanwhile is a clear conflict — and fork, which opens the new
 * session.
 */
export function ThreadHistory({ session }: { session: Session }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [offset, setOffset] = useState(0);
  const [notice, setNotice] = useState<string | null>(null);
  const history = useQuery(
    trpc.sessions.history.queryOptions({ id: session.id, limit: PAGE_SIZE, offset }),
  );
  const head = useQuery(trpc.sessions.history.queryOptions({ id: session.id, limit: 1 }));
  const rewind = useMutation(
    trpc.sessions.rewind.mutationOptions({
      onSuccess: async (rewound) => {
        setOffset(0);
        setNotice(`Rewound: the conversation now holds ${rewound.messageCount} messages.`);
        await queryClient.invalidateQueries();
      },
    }),
  );
  const fork = useMutation(
    trpc.sessions.fork.mutationOptions({
      onSuccess: (forked) => {
        window.location.hash = hrefOf({ page: 'session', id: forked.id });
      },
    }),
  );
  const failed = rewind.error ?? fork.error;
  return (
    <section aria-labelledby="history-title">
      <Heading as="h2" id="history-title" size="4">
        History
      </Heading>
      <QueryView
        query={history}
        loading="Loading the history"
        isEmpty={(d) => d.checkpoints.length === 0}
        empty="No checkpoints yet: the history starts with the first message."
      >
        {(d) => (
          <>
            <HistoryTable
              checkpoints={d.checkpoints}
              headId={head.data?.checkpoints[0]?.checkpointId ?? null}
              canRewind={session.status !== 'completed' && session.status !== 'failed'}
              pending={rewind.isPending || fork.isPending}
              onRewind={(checkpoint) => {
                setNotice(null);
                fork.reset();
                rewind.mutate({
                  id: session.id,
                  checkpointId: checkpoint.checkpointId,
                  expectedVersion: session.version,
                });
              }}
              onFork={(checkpoint) => {
                setNotice(null);
                rewind.reset();
                fork.mutate({
                  id: session.id,
                  checkpointId: checkpoint.checkpointId,
                  title: `${session.title ?? 'Session'} (fork at step ${checkpoint.step})`,
                });
              }}
            />
            <Flex asChild gap="3" mt="3">
              <nav aria-label="Pages of the history">
                <Button
                  type="button"
                  variant="soft"
                  disabled={offset === 0}
                  onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}
                >
                  Newer
                </Button>
                <Button
                  type="button"
                  variant="soft"
                  disabled={!d.hasMore}
                  onClick={() => setOffset(offset + PAGE_SIZE)}
                >
                  Older
                </Button>
              </nav>
            </Flex>
          </>
        )}
      </QueryView>
      {notice && (
        <Callout.Root highContrast color="green" size="1" role="status" mt="2">
          <Callout.Text>{notice}</Callout.Text>
        </Callout.Root>
      )}
      {failed && (
        <ErrorCallout>{historyErrorText(errorCode(failed), errorMessage(failed))}</ErrorCallout>
      )}
    </section>
  );
}
