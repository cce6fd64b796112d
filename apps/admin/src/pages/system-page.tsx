import { useQuery } from '@tanstack/react-query';
import { ArtifactsBrowser } from '../components/artifacts/artifacts-browser';
import { milliseconds } from '../components/common/durations';
import { AgentForm } from '../components/system/agent-form';
import { ProviderForm } from '../components/system/provider-form';
import { RegistryLists } from '../components/system/registry-lists';
import { SkillsList } from '../components/system/skills-list';
import { ErrorView, Loading, TableHead } from '../components/common/states';
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
      <h1 id="system-title">System</h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <span className={`badge ${h.status}`}>{h.status}</span>
        </dd>
        <dt>Version</dt>
        <dd>{h.version}</dd>
        <dt>Storage</dt>
        <dd>
          {h.storage.backend} · {h.storage.ok ? 'ok' : `down: ${h.storage.error ?? ''}`} ·{' '}
          {milliseconds(h.storage.latencyMs)}
          {h.storage.pool &&
            ` · pool ${h.storage.pool.size} (idle ${h.storage.pool.idle}, waiting ${h.storage.pool.waiting})`}
        </dd>
        <dt>Active sessions</dt>
        <dd>{h.activeSessions ?? '—'}</dd>
        <dt>Runs</dt>
        <dd>
          {h.runs.executing} executing · {h.runs.queued} queued · limit {h.runs.limit}
        </dd>
      </dl>
      <h2>Circuit breakers</h2>
      <div className="table-wrap">
        <table>
          <TableHead columns={['Name', 'State', 'Calls', 'Failed', 'Rejected']} />
          <tbody>
            {h.circuitBreakers.map((breaker) => (
              <tr key={breaker.name}>
                <td>{breaker.name}</td>
                <td>
                  <span className={`badge ${breaker.state}`}>{breaker.state}</span>
                </td>
                <td>{breaker.totalCalls}</td>
                <td>{breaker.failedCalls}</td>
                <td>{breaker.rejectedCalls}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <RegistryLists />
      <AgentForm />
      <ProviderForm />
      <SkillsList />
      <ArtifactsBrowser />
    </section>
  );
}
