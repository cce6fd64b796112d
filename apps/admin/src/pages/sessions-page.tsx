import type { SessionReadStatus, SessionSort } from '@cognition/client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useSubscription } from '@trpc/tanstack-react-query';
import { useState } from 'react';
import { changesSessionList, liveLabel } from '../components/session/session-watch';
import { Empty, ErrorView, Loading, TableHead } from '../components/common/states';
import { hrefOf } from '../route';
import { useTRPC } from '../trpc';
import { cost } from '../components/common/money';
import { sessionTitle } from '../components/common/session-title';

const PAGE_SIZE = 20;
// `abandoned`: active sessions idle past the server's threshold (computed when read).
const STATUSES: SessionReadStatus[] = [
  'active',
  'abandoned',
  'suspended',
  'completed',
  'failed',
  'error',
];
const SORTS: { value: SessionSort; label: string }[] = [
  { value: 'updated_at', label: 'last activity' },
  { value: 'created_at', label: 'created' },
  { value: 'title', label: 'title' },
  { value: 'message_count', label: 'messages' },
];

/**
 * Sessions filtered by status, agent, title text and one metadata pair, sorted and paged by the
 * server (newest activity first by default).
 */
export function SessionsPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // Sessions change behind the dashboard's back (other clients): the list follows the session
  // activity of the caller's scope and refetches its page when a session was saved. (A deleted
  // session writes no activity; it leaves the list at the next refetch, e.g. on focus.)
  const watch = useSubscription(
    trpc.sessions.watch.subscriptionOptions(
      {},
      {
        onData: (tracked) => {
          if (changesSessionList(tracked.data)) {
            void queryClient.invalidateQueries(trpc.sessions.list.pathFilter());
          }
        },
      },
    ),
  );
  const [status, setStatus] = useState<SessionReadStatus | ''>('');
  const [metaKey, setMetaKey] = useState('');
  const [metaValue, setMetaValue] = useState('');
  const [agent, setAgent] = useState('');
  const [title, setTitle] = useState('');
  const [sort, setSort] = useState<SessionSort>('updated_at');
  const [order, setOrder] = useState<'asc' | 'desc'>('desc');
  const [offset, setOffset] = useState(0);
  const metadata = metaKey.trim() !== '' ? { [metaKey.trim()]: metaValue } : undefined;
  const list = useQuery({
    ...trpc.sessions.list.queryOptions({
      limit: PAGE_SIZE,
      offset,
      ...(status !== '' ? { status } : {}),
      ...(metadata ? { metadata } : {}),
      ...(agent.trim() !== '' ? { agentName: agent.trim() } : {}),
      ...(title.trim() !== '' ? { titleContains: title.trim() } : {}),
      sort,
      order,
    }),
    placeholderData: (previous) => previous,
  });
  const resetPage = () => setOffset(0);

  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title">Sessions</h1>
      <p className={`live ${watch.status}`} role="status">
        {liveLabel(watch.status)}
      </p>
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status
          <select
            name="status"
            value={status}
            onChange={(e) => {
              setStatus(e.target.value as SessionReadStatus | '');
              resetPage();
            }}
          >
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Title contains
          <input
            name="title"
            value={title}
            onChange={(e) => (setTitle(e.target.value), resetPage())}
          />
        </label>
        <label>
          Agent
          <input
            name="agent"
            value={agent}
            onChange={(e) => (setAgent(e.target.value), resetPage())}
          />
        </label>
        <label>
          Metadata key
          <input
            name="metaKey"
            value={metaKey}
            onChange={(e) => (setMetaKey(e.target.value), resetPage())}
          />
        </label>
        <label>
          value
          <input
            name="metaValue"
            value={metaValue}
            onChange={(e) => (setMetaValue(e.target.value), resetPage())}
          />
        </label>
        <label>
          Sort by
          <select
            name="sort"
            value={sort}
            onChange={(e) => (setSort(e.target.value as SessionSort), resetPage())}
          >
            {SORTS.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Order
          <select
            name="order"
            value={order}
            onChange={(e) => (setOrder(e.target.value as 'asc' | 'desc'), resetPage())}
          >
            <option value="desc">descending</option>
            <option value="asc">ascending</option>
          </select>
        </label>
      </form>
      {list.isPending ? (
        <Loading what="Loading sessions" />
      ) : list.isError ? (
        <ErrorView error={list.error} />
      ) : list.data.sessions.length === 0 ? (
        <Empty>No sessions match.</Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table>
              <TableHead
                columns={[
                  'Title',
                  'Status',
                  'Agent',
                  'Metadata',
                  'Messages',
                  'Cost',
                  'Last activity',
                ]}
              />
              <tbody>
                {list.data.sessions.map((session) => (
                  <tr key={session.id}>
                    <td>
                      <a href={hrefOf({ page: 'session', id: session.id })}>
                        {sessionTitle(session)}
                      </a>
                    </td>
                    <td>
                      <span className={`badge ${session.status}`}>{session.status}</span>
                    </td>
                    <td>{session.agentName}</td>
                    <td className="meta">
                      {Object.entries(session.metadata).map(([k, v]) => (
                        <code key={k}>
                          {k}={v}
                        </code>
                      ))}
                    </td>
                    <td>{session.messageCount}</td>
                    <td
                      title={`${session.usage.runs} runs · ${session.usage.tokensIn + session.usage.tokensOut} tokens`}
                    >
                      {session.usage.runs === 0
                        ? '—'
                        : cost(session.usage.costUsd, session.usage.costComplete)}
                    </td>
                    <td>
                      <time dateTime={session.updatedAt.toISOString()}>
                        {session.updatedAt.toLocaleString()}
                      </time>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav className="pager" aria-label="Pages of sessions">
            <button
              type="button"
              disabled={offset === 0}
              onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}
            >
              Previous
            </button>
            <span>
              {offset + 1}–{offset + list.data.sessions.length} of {list.data.total}
            </span>
            <button
              type="button"
              disabled={offset + PAGE_SIZE >= list.data.total}
              onClick={() => setOffset(offset + PAGE_SIZE)}
            >
              Next
            </button>
          </nav>
        </>
      )}
    </section>
  );
}
