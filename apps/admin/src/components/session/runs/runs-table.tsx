import { CopyId } from '../../common/copy-id';
import { runCost } from '../../common/money';
import { TableHead } from '../../common/states';
import type { Run } from '@cognition/client';

function duration(run: Run): string {
  if (!run.startedAt) return '—';
  const end = run.finishedAt ?? new Date();
  return `${((end.getTime() - run.startedAt.getTime()) / 1000).toFixed(1)} s`;
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
                  <CopyId id={run.id} what="run id" />
                </td>
                <td>
                  <span className={`badge ${run.status}`}>{run.status}</span>
                  {run.error && <span className="error-text"> {run.error.message}</span>}
                </td>
                <td>{run.startedAt?.toLocaleTimeString() ?? '—'}</td>
                <td>{duration(run)}</td>
                <td>{run.usage ? `${run.usage.inputTokens} / ${run.usage.outputTokens}` : '—'}</td>
                <td>{run.usage?.model ?? '—'}</td>
                <td>{run.usage ? runCost(run.usage.costUsd) : '—'}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </div>
  );
}
