import { useQuery } from '@tanstack/react-query';
import { Empty, ErrorView, Loading, QueryView } from '../components/common/states';
import { CopyId } from '../components/common/copy-id';
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
      <p>
        <a href={hrefOf({ page: 'sessions' })}>← Sessions</a>
      </p>
      <h1 id="session-title">{sessionTitle(s)}</h1>
      <dl className="facts">
        <dt>Id</dt>
        <dd>
          <CopyId id={s.id} what="session id" />
        </dd>
        <dt>Status</dt>
        <dd>
          <span className={`badge ${s.status}`}>{s.status}</span>
        </dd>
        <dt>Agent</dt>
        <dd>{s.agentName}</dd>
        <dt>Messages</dt>
        <dd>{s.messageCount}</dd>
        <dt>Version</dt>
        <dd>{s.version}</dd>
        <dt>Updated</dt>
        <dd>{s.updatedAt.toLocaleString()}</dd>
      </dl>
      <SessionActions session={s} />
      <MetadataEditor session={s} />
      <section aria-labelledby="live-title">
        <h2 id="live-title">Live run</h2>
        {active ? (
          <LiveRun key={active.id} sessionId={id} runId={active.id} />
        ) : (
          <Empty>No run is active. A message sent by any client streams here as it runs.</Empty>
        )}
      </section>
      <section aria-labelledby="runs-title">
        <h2 id="runs-title">Runs</h2>
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
        <h2 id="messages-title">Conversation</h2>
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
