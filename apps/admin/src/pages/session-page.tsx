import { Card, DataList, Heading, Link } from '@radix-ui/themes';
import { useQuery } from '@tanstack/react-query';
import { Empty, ErrorView, Loading, QueryView } from '../components/common/states';
import { CopyId } from '../components/common/copy-id';
import { StatusBadge } from '../components/common/ui';
import { sessionTitle } from '../components/common/session-title';
import { AnswerFeedback } from '../components/session/conversation/answer-feedback';
import { LiveRun } from '../components/session/runs/live-run';
import { MessageView } from '../components/session/conversation/message-view';
import { MetadataEditor } from '../components/session/actions/metadata-editor';
import { RunTimelines } from '../components/session/runs/run-timelines';
import { RunsTable } from '../components/session/runs/runs-table';
import { SessionActions } from '../components/session/actions/session-actions';
import { ThreadHistory } from '../components/session/history/thread-history';
import { hrefOf } from '../route';
import { useTRPC } from '../trpc';

/** A run still holds the session while it is queued or running. */
const ACTIVE = new Set(['queued', 'running']);
/** A run started by another client shows up within this. */
const RUNS_REFRESH_MS = 1000;

/** One session: its details, the live run (if any), its runs and its conversation. */
export function SessionPage({ id }: { id: string }) {
  const trpc = useTRPC();
  const session = useQuery(trpc.sessions.get.queryOptions({ id }));
  const runs = useQuery({
    ...trpc.runs.list.queryOptions({ sessionId: id }),
    refetchInterval: RUNS_REFRESH_MS,
  });
  const messages = useQuery(trpc.messages.list.queryOptions({ sessionId: id, limit: 200 }));
  const active = runs.data?.runs.find((run) => ACTIVE.has(run.status)) ?? null;

  if (session.isPending) return <Loading what="Loading the session" />;
  if (session.isError) return <ErrorView error={session.error} />;
  const s = session.data;
  return (
    <article aria-labelledby="session-title">
      <Link href={hrefOf({ page: 'sessions' })} size="2">
        ← Sessions
      </Link>
      <Heading as="h1" id="session-title" size="6" mt="2">
        {sessionTitle(s)}
      </Heading>
      <Card>
        <DataList.Root className="facts" size="2">
          <DataList.Item>
            <DataList.Label>Id</DataList.Label>
            <DataList.Value>
              <CopyId id={s.id} what="session id" />
            </DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Status</DataList.Label>
            <DataList.Value>
              <StatusBadge status={s.status} />
            </DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Agent</DataList.Label>
            <DataList.Value>{s.agentName}</DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Messages</DataList.Label>
            <DataList.Value>{s.messageCount}</DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Version</DataList.Label>
            <DataList.Value>{s.version}</DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Updated</DataList.Label>
            <DataList.Value>{s.updatedAt.toLocaleString()}</DataList.Value>
          </DataList.Item>
        </DataList.Root>
      </Card>
      <SessionActions session={s} />
      <MetadataEditor session={s} />
      <section aria-labelledby="live-title">
        <Heading as="h2" id="live-title" size="4">
          Live run
        </Heading>
        {active ? (
          <LiveRun key={active.id} sessionId={id} runId={active.id} />
        ) : (
          <Empty>No run is active. A message sent by any client streams here as it runs.</Empty>
        )}
      </section>
      <section aria-labelledby="runs-title">
        <Heading as="h2" id="runs-title" size="4">
          Runs
        </Heading>
        <QueryView
          query={runs}
          loading="Loading runs"
          isEmpty={(d) => d.runs.length === 0}
          empty="No runs yet."
        >
          {(d) => (
            <>
              <RunsTable runs={d.runs} />
              <RunTimelines sessionId={id} runs={d.runs} />
            </>
          )}
        </QueryView>
      </section>
      <section aria-labelledby="messages-title">
        <Heading as="h2" id="messages-title" size="4">
          Conversation
        </Heading>
        <QueryView
          query={messages}
          loading="Loading messages"
          isEmpty={(d) => d.messages.length === 0}
          empty="No messages yet."
        >
          {(d) => (
            <ol className="messages">
              {d.messages.map((message) => (
                <MessageView
                  key={message.id}
                  message={message}
                  actions={
                    message.role === 'assistant' && message.content !== '' ? (
                      <AnswerFeedback message={message} />
                    ) : undefined
                  }
                />
              ))}
            </ol>
          )}
        </QueryView>
      </section>
      <ThreadHistory session={s} />
    </article>
  );
}
