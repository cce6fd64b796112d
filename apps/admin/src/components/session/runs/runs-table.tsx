import { TableHead } from '../../common/states';
import type { Run } from '@cognition/client';

function duration(run: Run): string {
  if (!run.startedAt) return '—';
  const end = run.finishedAt ?? new Date();
  return `${((end.getTime() - run.startedAt.getTime()) / 1000).toFixed(1)} s`;
}

function cost(run: Run): string {
  if (!run.usage) return '—';
  // An unknown price is shown as unknown, never as $0.
  return run.usage.costUsd === null ? 'unknown price' : `$${run.usage.costUsd.toFixed(6)}`;
}

/** A session's runs, newest first: outcome, timing and what they cost. */
export function RunsTable({ runs }: { runs: Run[] }) {
  return (
    <div className="table-wrap">
      <table>
        <TableHead
          columns={['Run', 'Status', 'Started', 'Duration', 'Tokens in / out', 'Model', 'Cost']}
        />
        <tbody>
          {[...runs]
            .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
            .map((run) => (
              <tr key={run.id}>
                <td>
                  <code title={run.id}>…{run.id.slice(-8)}</code>
                </td>
                <td>
                  <span className={`badge ${run.status}`}>{run.status}</span>
                  {run.error && <span className="error-text"> {run.error.message}</span>}
                </td>
                <td>{run.startedAt?.toLocaleTimeString() ?? '—'}</td>
                <td>{duration(run)}</td>
                <td>{run.usage ? `${run.usage.inputTokens} / ${run.usage.outputTokens}` : '—'}</td>
                <td>{run.usage?.model ?? '—'}</td>
                <td>{cost(run)}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </div>
  );
}
