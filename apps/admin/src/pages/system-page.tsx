import { Card, DataList, Heading, Table } from '@radix-ui/themes';
import { useQuery } from '@tanstack/react-query';
import { ArtifactsBrowser } from '../components/artifacts/artifacts-browser';
import { milliseconds } from '../components/common/durations';
import { AgentForm } from '../components/system/agent-form';
import { ProviderForm } from '../components/system/provider-form';
import { RegistryLists } from '../components/system/registry-lists';
import { SkillsList } from '../components/system/skills-list';
import { Empty, ErrorView, Loading } from '../components/common/states';
import { DataTable, StatusBadge } from '../components/common/ui';
import { useTRPC } from '../trpc';

const REFRESH_MS = 2000;

/**
 * This server's health (storage, run admission, circuit breakers), its agents and providers,
 * its skills and the artifacts.
 */
export function SystemPage() {
  const trpc = useTRPC();
  const health = useQuery({ ...trpc.health.get.queryOptions(), refetchInterval: REFRESH_MS });
  if (health.isPending) return <Loading what="Asking the server" />;
  if (health.isError) return <ErrorView error={health.error} />;
  const h = health.data;
  return (
    <section aria-labelledby="system-title">
      <Heading as="h1" id="system-title" size="6">
        System
      </Heading>
      <Card>
        <DataList.Root className="facts" size="2">
          <DataList.Item>
            <DataList.Label>Status</DataList.Label>
            <DataList.Value>
              <StatusBadge status={h.status} />
            </DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Version</DataList.Label>
            <DataList.Value>{h.version}</DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Storage</DataList.Label>
            <DataList.Value>
              {h.storage.backend} · {h.storage.ok ? 'ok' : `down: ${h.storage.error ?? ''}`} ·{' '}
              {milliseconds(h.storage.latencyMs)}
              {h.storage.pool &&
                ` · pool ${h.storage.pool.size} (idle ${h.storage.pool.idle}, waiting ${h.storage.pool.waiting})`}
            </DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Active sessions</DataList.Label>
            <DataList.Value>{h.activeSessions ?? '—'}</DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Runs</DataList.Label>
            <DataList.Value>
              {h.runs.executing} executing · {h.runs.queued} queued · limit {h.runs.limit}
            </DataList.Value>
          </DataList.Item>
        </DataList.Root>
      </Card>
      <Heading as="h2" size="4">
        Circuit breakers
      </Heading>
      {h.circuitBreakers.length === 0 ? (
        <Empty>No circuit breaker has been used yet.</Empty>
      ) : (
        <DataTable columns={['Name', 'State', 'Calls', 'Failed', 'Rejected']}>
          {h.circuitBreakers.map((breaker) => (
            <Table.Row key={breaker.name}>
              <Table.Cell>{breaker.name}</Table.Cell>
              <Table.Cell>
                <StatusBadge status={breaker.state} />
              </Table.Cell>
              <Table.Cell>{breaker.totalCalls}</Table.Cell>
              <Table.Cell>{breaker.failedCalls}</Table.Cell>
              <Table.Cell>{breaker.rejectedCalls}</Table.Cell>
            </Table.Row>
          ))}
        </DataTable>
      )}
      <RegistryLists />
      <AgentForm />
      <ProviderForm />
      <SkillsList />
      <ArtifactsBrowser />
    </section>
  );
}
