import type { UseQueryResult } from '@tanstack/react-query';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { useTRPC } from '../../trpc';
import { QueryView, TableHead } from '../common/states';

/** Which decisions an agent asks a person for, per tool (`interrupt_on`), as one short line. */
export function interruptSummary(interruptOn: Record<string, { allowed: string[] }>): string {
  const entries = Object.entries(interruptOn);
  if (entries.length === 0) return '—';
  return entries.map(([tool, rule]) => `${tool} (${rule.allowed.join('/')})`).join(', ');
}

/** One titled table of a list query's rows (loading, error and empty states included). */
function ListSection<T, E>(props: {
  id: string;
  title: string;
  query: UseQueryResult<T[], E>;
  loading: string;
  empty: string;
  columns: string[];
  rowKey: (row: T) => string;
  cells: (row: T) => ReactNode[];
}) {
  return (
    <section aria-labelledby={props.id}>
      <h2 id={props.id}>{props.title}</h2>
      <QueryView
        query={props.query}
        loading={props.loading}
        isEmpty={(d) => d.length === 0}
        empty={props.empty}
      >
        {(d) => (
          <div className="table-wrap">
            <table>
              <TableHead columns={props.columns} />
              <tbody>
                {d.map((row) => (
                  <tr key={props.rowKey(row)}>
                    {props.cells(row).map((cell, i) => (
                      <td key={props.columns[i]}>{cell}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </QueryView>
    </section>
  );
}

/** `api v3`, `builtin`, `file`: where an entry comes from, with its stored version. */
const sourceOf = (entry: { source: string; version: number | null }): string =>
  entry.version === null ? entry.source : `${entry.source} v${entry.version}`;

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
      <ListSection
        id="agents-title"
        title="Agents"
        query={agents}
        loading="Loading agents"
        empty="No agents."
        columns={['Name', 'Mode', 'Source', 'Model', 'Tools', 'Asks before', 'MCP']}
        rowKey={(agent) => agent.name}
        cells={(agent) => [
          <code title={agent.description}>{agent.name}</code>,
          agent.mode,
          sourceOf(agent),
          agent.model ?? 'default',
          agent.tools.length,
          interruptSummary(agent.interrupt_on),
          agent.mcp_servers.length === 0 ? '—' : agent.mcp_servers.map((s) => s.name).join(', '),
        ]}
      />
      <ListSection
        id="providers-title"
        title="Providers"
        query={providers}
        loading="Loading providers"
        empty="No LLM provider is configured."
        columns={['Id', 'Kind', 'Models', 'Source', 'Priority', 'Enabled', 'API key']}
        rowKey={(provider) => provider.id}
        cells={(provider) => [
          <code>{provider.id}</code>,
          provider.kind,
          provider.models.join(', '),
          sourceOf(provider),
          provider.priority,
          provider.enabled ? 'yes' : 'no',
          provider.apiKeySet ? 'set (hidden)' : 'none',
        ]}
      />
    </>
  );
}
