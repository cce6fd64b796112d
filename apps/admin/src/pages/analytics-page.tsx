import { Card, Flex, Grid, Heading, Table } from '@radix-ui/themes';
import type { UsageFigures } from '@cognition/contracts';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { cost } from '../components/common/money';
import { fillBuckets, UsageChart } from '../components/analytics/usage-chart';
import { QueryView } from '../components/common/states';
import { DataTable, SelectField } from '../components/common/ui';
import { useTRPC } from '../trpc';

const REFRESH_MS = 10_000;
const RANGES = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
type Range = keyof typeof RANGES;
const PERIODS: { value: Range; label: string }[] = [
  { value: '24h', label: 'last 24 hours' },
  { value: '7d', label: 'last 7 days' },
  { value: '30d', label: 'last 30 days' },
];

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
      <Heading as="h1" id="analytics-title" size="6">
        Analytics
      </Heading>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <Flex mb="3">
          <SelectField
            id="analytics-period"
            label="Period"
            value={range}
            options={PERIODS}
            onChange={setRange}
          />
        </Flex>
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
            <UsageChart
              buckets={fillBuckets(s.buckets ?? [], from, new Date(), bucket)}
              bucket={bucket}
            />
          </>
        )}
      </QueryView>
      <Heading as="h2" size="4">
        Cost by model
      </Heading>
      <QueryView
        query={models}
        loading="Adding up"
        isEmpty={(rows) => rows.length === 0}
        empty="No model calls in this period."
      >
        {(rows) => (
          <DataTable columns={['Provider', 'Model', 'Calls', 'Tokens in', 'Tokens out', 'Cost']}>
            {rows.map((row) => (
              <Table.Row key={`${row.provider}/${row.model}`}>
                <Table.Cell>{row.provider}</Table.Cell>
                <Table.Cell>{row.model}</Table.Cell>
                <Table.Cell>{row.calls}</Table.Cell>
                <Table.Cell>{row.tokensIn.toLocaleString()}</Table.Cell>
                <Table.Cell>{row.tokensOut.toLocaleString()}</Table.Cell>
                <Table.Cell>{cost(row.costUsd, row.costComplete)}</Table.Cell>
              </Table.Row>
            ))}
          </DataTable>
        )}
      </QueryView>
    </section>
  );
}

function Totals({ figures: s }: { figures: UsageFigures }) {
  const statuses = Object.entries(s.sessions.byStatus).filter(([, n]) => n > 0);
  return (
    <Grid columns={{ initial: '1', xs: '2', md: '5' }} gap="3" mb="4" asChild>
      <dl className="facts">
        <Card className="figure">
          <dt>Sessions</dt>
          <dd>
            {s.sessions.total}
            {statuses.length > 0 && ` (${statuses.map(([k, n]) => `${n} ${k}`).join(', ')})`}
          </dd>
        </Card>
        <Card className="figure">
          <dt>Runs</dt>
          <dd>
            {s.runs.total} · {s.runs.failed} failed · {s.runs.aborted} aborted
          </dd>
        </Card>
        <Card className="figure">
          <dt>Tokens</dt>
          <dd>
            {s.tokensIn.toLocaleString()} in · {s.tokensOut.toLocaleString()} out
            {s.estimatedTokensIn + s.estimatedTokensOut > 0 &&
              ` (${(s.estimatedTokensIn + s.estimatedTokensOut).toLocaleString()} estimated)`}
          </dd>
        </Card>
        <Card className="figure">
          <dt>Cost</dt>
          <dd>{s.runs.total === 0 ? '— (no runs)' : cost(s.costUsd, s.costComplete)}</dd>
        </Card>
        <Card className="figure">
          <dt>Feedback</dt>
          <dd>
            {s.feedback.count === 0
              ? 'none yet'
              : `${s.feedback.count} · average ${s.feedback.averageScore?.toFixed(1) ?? '—'} / 5`}
          </dd>
        </Card>
      </dl>
    </Grid>
  );
}
