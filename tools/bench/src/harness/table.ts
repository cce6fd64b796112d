import { formatGoal, formatRatio } from './stats';
import type { BenchmarkRun, Comparison, ResultRow } from './types';

export const TABLE_HEADER = [
  '#',
  'case',
  'figures',
  'compared with',
  'ratio',
  'goal',
  'verdict',
] as const;

/** The case cell of the lines that compare a row's case with a peer. */
export const PEER_LINE_CASE = '↳ same case';

/** The verdict cell: `met`, `missed`, `FAILED: why`, or `report` when there is no goal. */
function verdictCell(row: ResultRow): string {
  if (row.failure) return `FAILED: ${row.failure}`;
  return row.comparison?.verdict ?? 'report';
}

/** The compared-with, ratio, goal and verdict cells of one comparison. */
function comparisonCells(c: Comparison, verdict: string): string[] {
  return [
    `${c.against}: ${c.againstFigures}`,
    formatRatio(c.ratio),
    c.goal ? formatGoal(c.goal) : '—',
    verdict,
  ];
}

/** The cells of one row, in {@link TABLE_HEADER} order. */
function rowCells(id: number, row: ResultRow): string[] {
  const c = row.comparison;
  return [
    String(id),
    row.case,
    row.figures,
    ...(c ? comparisonCells(c, verdictCell(row)) : ['—', '—', '—', verdictCell(row)]),
  ];
}

/** The line under a row that compares its case with one peer. */
function peerCells(id: number, peer: Comparison): string[] {
  return [String(id), PEER_LINE_CASE, '—', ...comparisonCells(peer, peer.verdict ?? 'report')];
}

/** Every line of the runs: each row, then one per peer (an errored benchmark is one line). */
export function tableRows(runs: readonly BenchmarkRun[]): string[][] {
  return runs.flatMap((run) =>
    run.error !== undefined
      ? [[String(run.id), run.title, '—', '—', '—', '—', `ERROR: ${run.error}`]]
      : run.rows.flatMap((row) => [
          rowCells(run.id, row),
          ...(row.peers ?? []).map((peer) => peerCells(run.id, peer)),
        ]),
  );
}

/** A fixed-width text table for the terminal. */
export function textTable(header: readonly string[], rows: readonly string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** A GitHub-flavoured Markdown table; `|` inside cells is escaped. */
export function markdownTable(header: readonly string[], rows: readonly string[][]): string {
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell) => cell.replace(/\|/g, '\\|').replace(/\n/g, ' ')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
