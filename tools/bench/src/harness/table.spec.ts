import { PEER_LINE_CASE, TABLE_HEADER, markdownTable, tableRows } from './table';
import type { BenchmarkRun } from './types';

const run: BenchmarkRun = {
  id: 1,
  title: 'Turn',
  measuredAs: 'p50',
  comparedWith: 'floor and peers',
  goal: '≤ 1×',
  durationMs: 10,
  notes: [],
  rows: [
    {
      case: 'SQLite turn',
      figures: 'p50 10 ms',
      metrics: { p50Ms: 10 },
      comparison: {
        against: 'floor',
        againstFigures: 'p50 5.00 ms',
        ratio: 2,
        goal: { kind: 'at-most', ratio: 1.5 },
        verdict: 'missed',
      },
      peers: [
        {
          against: 'Mastra (LibSQL)',
          againstFigures: 'p50 20.0 ms',
          ratio: 0.5,
          goal: { kind: 'at-most', ratio: 1 },
          verdict: 'met',
        },
        { against: 'LangGraph API server (in-memory)', againstFigures: 'p50 40.0 ms', ratio: 0.25 },
      ],
    },
    { case: 'plain', figures: '1 ops/s', metrics: { ops: 1 } },
  ],
};

describe('tableRows', () => {
  it('puts one line per peer under its row: a ratio with its verdict', () => {
    expect(tableRows([run])).toEqual([
      ['1', 'SQLite turn', 'p50 10 ms', 'floor: p50 5.00 ms', '2.00×', '≤ 1.5×', 'missed'],
      ['1', PEER_LINE_CASE, '—', 'Mastra (LibSQL): p50 20.0 ms', '0.50×', '≤ 1×', 'met'],
      [
        '1',
        PEER_LINE_CASE,
        '—',
        'LangGraph API server (in-memory): p50 40.0 ms',
        '0.25×',
        '—',
        'report',
      ],
      ['1', 'plain', '1 ops/s', '—', '—', '—', 'report'],
    ]);
  });

  it('renders peer lines in Markdown like any other line', () => {
    const md = markdownTable(TABLE_HEADER, tableRows([run]));
    expect(md.split('\n')).toHaveLength(2 + 4);
    expect(md).toContain(`| 1 | ${PEER_LINE_CASE} | — | Mastra (LibSQL): p50 20.0 ms | 0.50× |`);
  });
});
