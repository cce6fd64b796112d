import { Code, Heading, Table, Text } from '@radix-ui/themes';
import type { UseQueryResult } from '@tanstack/react-query';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { useTRPC } from '../../trpc';
import { QueryView } from '../common/states';
import { DataTable } from '../common/ui';
import { DeleteEntry } from './delete-entry';

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
      <Heading as="h2" id={props.id} size="4">
        {props.title}
      </Heading>
      <QueryView
        query={props.query}
        loading={props.loading}
        isEmpty={(d) => d.length === 0}
        empty={props.empty}
      >
        {(d) => (
          <DataTable columns={props.columns}>
            {d.map((row) => (
              <Table.Row key={props.rowKey(row)}>
                {props.cells(row).map((cell, i) => (
                  <Table.Cell key={props.columns[i]}>{cell}</Table.Cell>
                ))}
              </Table.Row>
            ))}
          </DataTable>
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
        columns={['Name', 'Mode', 'Source', 'Model', 'Tools', 'Asks before', 'MCP', 'Actions']}
        rowKey={(agent) => agent.name}
        cells={(agent) => [
          <Code title={agent.description}>{agent.name}</Code>,
          agent.mode,
          sourceOf(agent),
          agent.model ?? 'default',
          agent.tools.length,
          interruptSummary(agent.interrupt_on),
          agent.mcp_servers.length === 0 ? '—' : agent.mcp_servers.map((s) => s.name).join(', '),
          agent.read_only ? (
            <Text size="1" color="gray">
              the server’s own
            </Text>
          ) : (
            <DeleteAgent name={agent.name} version={agent.version} />
          ),
        ]}
      />
      <ListSection
        id="providers-title"
        title="Providers"
        query={providers}
        loading="Loading providers"
        empty="No LLM provider is configured."
        columns={['Id', 'Kind', 'Models', 'Source', 'Priority', 'Enabled', 'API key', 'Actions']}
        rowKey={(provider) => provider.id}
        cells={(provider) => [
          <Code>{provider.id}</Code>,
          provider.kind,
          provider.models.join(', '),
          sourceOf(provider),
          provider.priority,
          provider.enabled ? 'yes' : 'no',
          provider.apiKeySet ? 'set (hidden)' : 'none',
          provider.readOnly ? (
            <Text size="1" color="gray">
              the server’s own
            </Text>
          ) : (
            <DeleteProvider id={provider.id} version={provider.version} />
          ),
        ]}
      />
    </>
  );
}

/** An admin deletes a registry agent (`agents.delete` with the version the page shows). */
function DeleteAgent({ name, version }: { name: string; version: number | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const remove = useMutation(
    trpc.agents.delete.mutationOptions({
      // Gone, or refused because it changed meanwhile: either way the list shows what is now.
      onSettled: () => queryClient.invalidateQueries(trpc.agents.list.queryFilter()),
    }),
  );
  return (
    <DeleteEntry
      what="agent"
      name={name}
      version={version}
      pending={remove.isPending}
      error={remove.error}
      onDelete={() =>
        remove.mutateAsync({ name, ...(version !== null ? { expected_version: version } : {}) })
      }
      onReset={() => remove.reset()}
    />
  );
}

/** An admin deletes a registry provider (`providers.delete` with the version the page shows). */
function DeleteProvider({ id, version }: { id: string; version: number | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const remove = useMutation(
    trpc.providers.delete.mutationOptions({
      onSettled: () => queryClient.invalidateQueries(trpc.providers.list.queryFilter()),
    }),
  );
  return (
    <DeleteEntry
      what="provider"
      name={id}
      version={version}
      pending={remove.isPending}
      error={remove.error}
      onDelete={() =>
        remove.mutateAsync({ id, ...(version !== null ? { expectedVersion: version } : {}) })
      }
      onReset={() => remove.reset()}
    />
  );
}
