import { Table, Text } from '@radix-ui/themes';
import { CopyId } from '../../common/copy-id';
import { runCost } from '../../common/money';
import { DataTable, StatusBadge } from '../../common/ui';
import type { Run } from '@cognition/client';

function duration(run: Run): string {
  if (!run.startedAt) return '—';
  const end = run.finishedAt ?? new Date();
  return `${((end.getTime() - run.startedAt.getTime()) / 1000).toFixed(1)} s`;
}

/** A session's runs, newest first: outcome, timing and what they cost. */
export function RunsTable({ runs }: { runs: Run[] }) {
  return (
    <DataTable
      columns={['Run', 'Status', 'Started', 'Duration', 'Tokens in / out', 'Model', 'Cost']}
    >
      {[...runs]
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
        .map((run) => (
          <Table.Row key={run.id}>
            <Table.Cell>
              <CopyId id={run.id} what="run id" />
            </Table.Cell>
            <Table.Cell>
              <StatusBadge status={run.status} />
              {run.error && (
                <Text size="1" color="red" className="error-text">
                  {' '}
                  {run.error.message}
                </Text>
              )}
            </Table.Cell>
            <Table.Cell>{run.startedAt?.toLocaleTimeString() ?? '—'}</Table.Cell>
            <Table.Cell>{duration(run)}</Table.Cell>
            <Table.Cell>
              {run.usage ? `${run.usage.inputTokens} / ${run.usage.outputTokens}` : '—'}
            </Table.Cell>
            <Table.Cell>{run.usage?.model ?? '—'}</Table.Cell>
            <Table.Cell>{run.usage ? runCost(run.usage.costUsd) : '—'}</Table.Cell>
          </Table.Row>
        ))}
    </DataTable>
  );
}
