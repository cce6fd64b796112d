import { describeMachine } from './machine';
import { markdownTable, TABLE_HEADER, tableRows } from './table';
import type { BenchmarkRun, PlannedBenchmark, RunFacts, RunReport } from './types';

export const GENERATED_START = '<!-- bench:generated:start -->';
export const GENERATED_END = '<!-- bench:generated:end -->';
const DATA_PREFIX = '<!-- bench:data ';
const DATA_SUFFIX = ' -->';

/** The last recorded result of one benchmark, with the facts of the run that produced it. */
export interface DocSection {
  facts: RunFacts;
  run: BenchmarkRun;
}

/** Thrown when docs/benchmarks.md holds a generated block the writer cannot read back. */
export class BenchDocError extends Error {
  override readonly name = 'BenchDocError';
}

/**
 * JSON that can sit inside an HTML comment: `--` (which would end the comment) only occurs
 * inside JSON strings, where `-\u002d` is an equivalent spelling.
 */
function encodeData(section: DocSection): string {
  return `${DATA_PREFIX}${JSON.stringify(section).replace(/--/g, '-\\u002d')}${DATA_SUFFIX}`;
}

/** The sections recorded in a generated block, by benchmark id. */
export function readSections(doc: string): Map<number, DocSection> {
  const sections = new Map<number, DocSection>();
  for (const line of doc.split('\n')) {
    if (!line.startsWith(DATA_PREFIX) || !line.endsWith(DATA_SUFFIX)) continue;
    const json = line.slice(DATA_PREFIX.length, line.length - DATA_SUFFIX.length);
    let section: DocSection;
    try {
      section = JSON.parse(json) as DocSection;
    } catch (error) {
      throw new BenchDocError(
        `docs/benchmarks.md: a bench:data comment is not valid JSON (${(error as Error).message}); fix or delete that line`,
      );
    }
    if (typeof section.run?.id !== 'number' || !Array.isArray(section.run.rows)) {
      throw new BenchDocError(
        'docs/benchmarks.md: a bench:data comment lacks run.id or run.rows; fix or delete that line',
      );
    }
    sections.set(section.run.id, section);
  }
  return sections;
}

function renderSection({ facts, run }: DocSection): string {
  const parts = [
    `### ${run.id}. ${run.title}`,
    '',
    encodeData({ facts, run }),
    '',
    `Measured ${facts.date.slice(0, 16).replace('T', ' ')} UTC at commit \`${facts.commit}\` on ` +
      `${describeMachine(facts.machine)}; took ${(run.durationMs / 1000).toFixed(1)} s.`,
    '',
    `Measured as: ${run.measuredAs}. Compared with: ${run.comparedWith}. Goal: ${run.goal}.`,
    '',
  ];
  // The rows themselves are in the results table above.
  if (run.error !== undefined) parts.push(`**The benchmark failed:** ${run.error}`, '');
  for (const note of run.notes) parts.push(`- ${note}`);
  if (run.notes.length > 0) parts.push('');
  return parts.join('\n');
}

/** The generated block: summary table, one section per benchmark, then the unregistered ones. */
function renderGeneratedBlock(
  sections: readonly DocSection[],
  planned: readonly PlannedBenchmark[],
): string {
  const ordered = [...sections].sort((a, b) => a.run.id - b.run.id);
  const measured = new Set(ordered.map((s) => s.run.id));
  const waiting = planned.filter((p) => !measured.has(p.id));
  const parts = [
    GENERATED_START,
    '<!-- Written by `npm run bench` (tools/bench); each section keeps the data of its last full run. Edit outside these markers. -->',
    '',
    '## Results',
    '',
  ];
  if (ordered.length === 0) {
    parts.push('No full run recorded yet.', '');
  } else {
    parts.push(
      markdownTable(TABLE_HEADER, tableRows(ordered.map((s) => s.run))),
      '',
      ...ordered.map(renderSection),
    );
  }
  if (waiting.length > 0) {
    parts.push(
      '## Not registered yet',
      '',
      markdownTable(
        ['#', 'what', 'measured as', 'compared with', 'goal', 'waiting for'],
        waiting.map((p) => [
          String(p.id),
          p.title,
          p.measuredAs,
          p.comparedWith,
          p.goal,
          p.blockedOn,
        ]),
      ),
      '',
    );
  }
  parts.push(GENERATED_END);
  return parts.join('\n');
}

/**
 * The new text of docs/benchmarks.md: the sections of `report` replace those of the same ids,
 * the others are kept, and everything outside the generated markers is left as it was. A file
 * without markers gets the block appended; no file gets `skeleton` plus the block.
 */
export function updateBenchmarksDoc(
  existing: string | undefined,
  report: RunReport,
  planned: readonly PlannedBenchmark[],
  skeleton: string,
): string {
  const doc = existing ?? skeleton;
  const start = doc.indexOf(GENERATED_START);
  const end = doc.indexOf(GENERATED_END);
  if ((start === -1) !== (end === -1) || end < start) {
    throw new BenchDocError(
      `docs/benchmarks.md has only one of the markers ${GENERATED_START} / ${GENERATED_END}, or they are out of order`,
    );
  }
  const sections =
    start === -1 ? new Map<number, DocSection>() : readSections(doc.slice(start, end));
  for (const run of report.runs) sections.set(run.id, { facts: report.facts, run });
  const block = renderGeneratedBlock([...sections.values()], planned);
  if (start === -1) return `${doc.trimEnd()}\n\n${block}\n`;
  return `${doc.slice(0, start)}${block}${doc.slice(end + GENERATED_END.length)}`;
}
