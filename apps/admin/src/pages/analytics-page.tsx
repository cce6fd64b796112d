import type { UsageFigures } from '@cognition/contracts';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { cost } from '../components/common/money';
import { UsageChart } from '../components/analytics/usage-chart';
import { QueryView, TableHead } from '../components/common/states';
import { useTRPC } from '../trpc';

const REFRESH_MS = 10_000;
const RANGES = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
type Range = keyof typeof RANGES;

/**
 * Usage and cost over the sessions this key may see: totals, a chart per hour or day, and cost
 * per model (the server's `sessions.stats` and `sessions.costByModel`, computed in the database).
 */
export function AnalyticsPage() {
  const trpc = useTRPC();
  const [range, setRange] = useState<Range>('7d');
  // Rounded to the minute so the query key (hence the cache) is stable between renders.
  const from = new Date(Math.floor((Date.now() - RANGES[range]) / 60_000) * 60_000);
  const bucket = range === '24h' ? 'hour' : 'day';
  const stats = useQuery({
    ...trpc.sessions.stats.queryOptions({ from, bucket }),
    refetchInterval: REFRESH_MS,
    placeholderData: (previous) => previous,
  });
  const models = useQuery({
    ...trpc.sessions.costByModel.queryOptions({ from }),
    refetchInterval: REFRESH_MS,
    placeholderData: (previous) => previous,
  });
  return (
    <section aria-labelledby="analytics-title">
      <h1 id="analytics-title">Analytics</h1>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Period
          <select value={range} onChange={(e) => setRange(e.target.value as Range)}>
            <option value="24h">last 24 hours</option>
            <option value="7d">last 7 days</option>
            <option value="30d">last 30 days</option>
          </select>
        </label>
      </form>
      <QueryView
        query={stats}
        loading="Counting"
        isEmpty={(s) => s.sessions.total === 0}
        empty="No sessions in this period."
      >
        {(s) => (
          <>
            <Totals figures={s} />
            <UsageChart buckets={s.buckets ?? []} bucket={bucket} />
          </>
        )}
      </QueryView>
      <h2>Cost by model</h2>
      <QueryView
        query={models}
        loading="Adding up"
        isEmpty={(rows) => rows.length === 0}
        empty="No model calls in this period."
      >
        {(rows) => (
          <div className="table-wrap">
            <table>
              <TableHead
                columns={['Provider', 'Model', 'Calls', 'Tokens in', 'Tokens out', 'Cost']}
              />
              <tbody>
                {rows.map((row) => (
                  <tr key={`${row.provider}/${row.model}`}>
                    <td>{row.provider}</td>
                    <td>{row.model}</td>
                    <td>{row.calls}</td>
                    <td>{row.tokensIn.toLocaleString()}</td>
                    <td>{row.tokensOut.toLocaleString()}</td>
                    <td>{cost(row.costUsd, row.costComplete)}</td>
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

function Totals({ figures: s }: { figures: UsageFigures }) {
  const statuses = Object.entries(s.sessions.byStatus).filter(([, n]) => n > 0);
  return (
    <dl className="facts">
      <dt>Sessions</dt>
      <dd>
        {s.sessions.total}
        {statuses.length > 0 && ` (${statuses.map(([k, n]) => `${n} ${k}`).join(', ')})`}
      </dd>
      <dt>Runs</dt>
      <dd>
        {s.runs.total} · {s.runs.failed} failed · {s.runs.aborted} aborted
      </dd>
      <dt>Tokens</dt>
      <dd>
        {s.tokensIn.toLocaleString()} in · {s.tokensOut.toLocaleString()} out
        {s.estimatedTokensIn + s.estimatedTokensOut > 0 &&
          ` (${(s.estimatedTokensIn + s.estimatedTokensOut).toLocaleString()} estimated)`}
      </dd>
      <dt>Cost</dt>
      <dd>{cost(s.costUsd, s.costComplete)}</dd>
      <dt>Feedback</dt>
      <dd>
        {s.feedback.count === 0
          ? 'none yet'
          : `${s.feedback.count} · average ${s.feedback.averageScore?.toFixed(1) ?? '—'} / 5`}
      </dd>
    </dl>
  );
}
