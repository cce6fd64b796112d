import { Card, Code, Flex, Heading, Link, Table, Text } from '@radix-ui/themes';
import type { SessionReadStatus, SessionSort } from '@cognition/client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useSubscription } from '@trpc/tanstack-react-query';
import { useState } from 'react';
import { changesSessionList, liveLabel } from '../components/session/session-watch';
import { Empty, ErrorView, Loading } from '../components/common/states';
import { DataTable, InputField, Pager, SelectField, StatusBadge } from '../components/common/ui';
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
const ORDERS = [
  { value: 'desc' as const, label: 'descending' },
  { value: 'asc' as const, label: 'ascending' },
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

  const statusOptions = [
    { value: '' as const, label: 'any' },
    ...STATUSES.map((s) => ({ value: s, label: s })),
  ];
  return (
    <section aria-labelledby="sessions-title">
      <Heading as="h1" id="sessions-title" size="6">
        Sessions
      </Heading>
      <Text as="p" size="1" color="gray" className={`live ${watch.status}`} role="status" mb="3">
        {liveLabel(watch.status)}
      </Text>
      <Card mb="4">
        <form role="search" onSubmit={(e) => e.preventDefault()}>
          <Flex className="filters" gap="3" wrap="wrap" align="end">
            <SelectField
              id="filter-status"
              label="Status"
              name="status"
              value={status}
              options={statusOptions}
              onChange={(value) => (setStatus(value), resetPage())}
            />
            <InputField
              id="filter-title"
              label="Title contains"
              name="title"
              value={title}
              onChange={(value) => (setTitle(value), resetPage())}
            />
            <InputField
              id="filter-agent"
              label="Agent"
              name="agent"
              value={agent}
              onChange={(value) => (setAgent(value), resetPage())}
            />
            <InputField
              id="filter-meta-key"
              label="Metadata key"
              name="metaKey"
              value={metaKey}
              onChange={(value) => (setMetaKey(value), resetPage())}
            />
            <InputField
              id="filter-meta-value"
              label="value"
              name="metaValue"
              value={metaValue}
              onChange={(value) => (setMetaValue(value), resetPage())}
            />
            <SelectField
              id="filter-sort"
              label="Sort by"
              name="sort"
              value={sort}
              options={SORTS}
              onChange={(value) => (setSort(value), resetPage())}
            />
            <SelectField
              id="filter-order"
              label="Order"
              name="order"
              value={order}
              options={ORDERS}
              onChange={(value) => (setOrder(value), resetPage())}
            />
          </Flex>
        </form>
      </Card>
      {list.isPending ? (
        <Loading what="Loading sessions" />
      ) : list.isError ? (
        <ErrorView error={list.error} />
      ) : list.data.sessions.length === 0 ? (
        <Empty>No sessions match.</Empty>
      ) : (
        <>
          <DataTable
            size="2"
            columns={['Title', 'Status', 'Agent', 'Metadata', 'Messages', 'Cost', 'Last activity']}
          >
            {list.data.sessions.map((session) => (
              <Table.Row key={session.id}>
                <Table.Cell>
                  <Link href={hrefOf({ page: 'session', id: session.id })} weight="medium">
                    {sessionTitle(session)}
                  </Link>
                </Table.Cell>
                <Table.Cell>
                  <StatusBadge status={session.status} />
                </Table.Cell>
                <Table.Cell>{session.agentName}</Table.Cell>
                <Table.Cell className="meta">
                  {Object.entries(session.metadata).map(([k, v]) => (
                    <Code key={k} variant="soft" color="gray">
                      {k}={v}
                    </Code>
                  ))}
                </Table.Cell>
                <Table.Cell>{session.messageCount}</Table.Cell>
                <Table.Cell
                  title={`${session.usage.runs} runs · ${session.usage.tokensIn + session.usage.tokensOut} tokens`}
                >
                  {session.usage.runs === 0
                    ? '—'
                    : cost(session.usage.costUsd, session.usage.costComplete)}
                </Table.Cell>
                <Table.Cell>
                  <time dateTime={session.updatedAt.toISOString()}>
                    {session.updatedAt.toLocaleString()}
                  </time>
                </Table.Cell>
              </Table.Row>
            ))}
          </DataTable>
          <Pager
            label="Pages of sessions"
            offset={offset}
            shown={list.data.sessions.length}
            total={list.data.total}
            pageSize={PAGE_SIZE}
            onOffset={setOffset}
          />
        </>
      )}
    </section>
  );
}
