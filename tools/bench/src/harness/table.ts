import { formatGoal, formatRatio } from './stats';
import type { BenchmarkRun, ResultRow } from './types';

export const TABLE_HEADER = [
  '#',
  'case',
  'figures',
  'compared with',
  'ratio',
  'goal',
  'verdict',
] as const;

/** The verdict cell: `met`, `missed`, `FAILED: why`, or `report` when there is no goal. */
export function verdictCell(row: ResultRow): string {
  if (row.failure) return `FAILED: ${row.failure}`;
  return row.comparison?.verdict ?? 'report';
}

/** The cells of one row, in {@link TABLE_HEADER} order. */
export function rowCells(id: number, row: ResultRow): string[] {
  const c = row.comparison;
  return [
    String(id),
    row.case,
    row.figures,
    c ? `${c.against}: ${c.againstFigures}` : '—',
    c ? formatRatio(c.ratio) : '—',
    c?.goal ? formatGoal(c.goal) : '—',
    verdictCell(row),
  ];
}

/** Every row of the runs (an errored benchmark is one row saying so). */
export function tableRows(runs: readonly BenchmarkRun[]): string[][] {
  return runs.flatMap((run) =>
    run.error !== undefined
      ? [[String(run.id), run.title, '—', '—', '—', '—', `ERROR: ${run.error}`]]
      : run.rows.map((row) => rowCells(run.id, row)),
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
