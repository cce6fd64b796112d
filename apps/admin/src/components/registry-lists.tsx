import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '../trpc';
import { QueryView, TableHead } from './states';

/** Which decisions an agent asks a person for, per tool (`interrupt_on`), as one short line. */
export function interruptSummary(interruptOn: Record<string, { allowed: string[] }>): string {
  const entries = Object.entries(interruptOn);
  if (entries.length === 0) return '—';
  return entries.map(([tool, rule]) => `${tool} (${rule.allowed.join('/')})`).join(', ');
}

/**
 * The agents and LLM providers in force (`agents.list`, `providers.list`): built-in, from the
 * server's files, or from the registry API, with their version. Provider keys are write-only
 * on the server, so the page can only say whether one is set.
 */
export function RegistryLists() {
  const trpc = useTRPC();
  const agents = useQuery(trpc.agents.list.queryOptions());
  const providers = useQuery(trpc.providers.list.queryOptions());
  return (
    <>
      <section aria-labelledby="agents-title">
        <h2 id="agents-title">Agents</h2>
        <QueryView
          query={agents}
          loading="Loading agents"
          isEmpty={(d) => d.length === 0}
          empty="No agents."
        >
          {(d) => (
            <div className="table-wrap">
              <table>
                <TableHead
                  columns={['Name', 'Mode', 'Source', 'Model', 'Tools', 'Asks before', 'MCP']}
                />
                <tbody>
                  {d.map((agent) => (
                    <tr key={agent.name}>
                      <td>
                        <code title={agent.description}>{agent.name}</code>
                      </td>
                      <td>{agent.mode}</td>
                      <td>
                        {agent.source}
                        {agent.version !== null && ` v${agent.version}`}
                      </td>
                      <td>{agent.model ?? 'default'}</td>
                      <td>{agent.tools.length}</td>
                      <td>{interruptSummary(agent.interrupt_on)}</td>
                      <td>
                        {agent.mcp_servers.length === 0
                          ? '—'
                          : agent.mcp_servers.map((s) => s.name).join(', ')}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </QueryView>
      </section>
      <section aria-labelledby="providers-title">
        <h2 id="providers-title">Providers</h2>
        <QueryView
          query={providers}
          loading="Loading providers"
          isEmpty={(d) => d.length === 0}
          empty="No LLM provider is configured."
        >
          {(d) => (
            <div className="table-wrap">
              <table>
                <TableHead
                  columns={['Id', 'Kind', 'Models', 'Source', 'Priority', 'Enabled', 'API key']}
                />
                <tbody>
                  {d.map((provider) => (
                    <tr key={provider.id}>
                      <td>
                        <code>{provider.id}</code>
                      </td>
                      <td>{provider.kind}</td>
                      <td>{provider.models.join(', ')}</td>
                      <td>
                        {provider.source}
                        {provider.version !== null && ` v${provider.version}`}
                      </td>
                      <td>{provider.priority}</td>
                      <td>{provider.enabled ? 'yes' : 'no'}</td>
                      <td>{provider.apiKeySet ? 'set (hidden)' : 'none'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </QueryView>
      </section>
    </>
  );
}
