import {
  BenchDocError,
  GENERATED_END,
  GENERATED_START,
  readSections,
  updateBenchmarksDoc,
} from './docs-writer';
import type { BenchmarkRun, PlannedBenchmark, RunReport } from './types';

const facts = (date: string): RunReport['facts'] => ({
  date,
  commit: 'abc123',
  smoke: false,
  machine: {
    cpuModel: 'Test CPU',
    cores: 2,
    memoryBytes: 8 * 1024 ** 3,
    nodeVersion: 'v20.20.0',
    platform: 'linux',
    loadAverage: 1,
  },
});

function run(id: number, caseName: string, ratio: number): BenchmarkRun {
  return {
    id,
    title: `Benchmark ${id}`,
    measuredAs: 'ops/s -- of one caller',
    comparedWith: 'a peer',
    goal: '≥ 1×',
    durationMs: 1234,
    notes: ['a note with | a pipe'],
    rows: [
      {
        case: caseName,
        figures: '10 ops/s',
        metrics: { ours: 10 },
        comparison: {
          against: 'peer',
          againstFigures: '8 ops/s',
          ratio,
          goal: { kind: 'at-least', ratio: 1 },
          verdict: ratio >= 1 ? 'met' : 'missed',
        },
      },
    ],
  };
}

const planned: PlannedBenchmark[] = [
  {
    id: 1,
    title: 'Turn',
    measuredAs: 'p50',
    comparedWith: 'floor',
    goal: '≤ 1.5×',
    blockedOn: 'runs',
  },
  { id: 5, title: 'Five', measuredAs: 'x', comparedWith: 'y', goal: 'z', blockedOn: 'nothing' },
];
const skeleton = '# Benchmarks\n\nHand-written intro.\n';

describe('updateBenchmarksDoc', () => {
  it('creates the file from the skeleton with a summary, sections and the planned ones', () => {
    const doc = updateBenchmarksDoc(
      undefined,
      { facts: facts('2026-01-01T10:00:00.000Z'), runs: [run(5, 'SQLite put', 1.25)] },
      planned,
      skeleton,
    );
    expect(doc.startsWith(skeleton.trimEnd())).toBe(true);
    expect(doc).toContain('| 5 | SQLite put | 10 ops/s | peer: 8 ops/s | 1.25× | ≥ 1× | met |');
    expect(doc).toContain('### 5. Benchmark 5');
    expect(doc).toContain('commit `abc123`');
    expect(doc).toContain('- a note with | a pipe');
    expect(doc).toContain('## Not registered yet');
    expect(doc).toContain('| 1 | Turn | p50 | floor | ≤ 1.5× | runs |');
    // A registered id is not listed as waiting.
    expect(doc).not.toContain('| 5 | Five |');
  });

  it('replaces the sections of the new run, keeps the others and the hand-written text', () => {
    const first = updateBenchmarksDoc(
      undefined,
      {
        facts: facts('2026-01-01T10:00:00.000Z'),
        runs: [run(5, 'SQLite put', 0.5), run(7, 'local exec', 1.1)],
      },
      planned,
      skeleton,
    );
    const edited = `${first}\n## Findings\n\nWritten by a person.\n`;
    const second = updateBenchmarksDoc(
      edited,
      { facts: facts('2026-02-02T10:00:00.000Z'), runs: [run(5, 'SQLite put', 2)] },
      planned,
      skeleton,
    );
    expect(second).toContain('Hand-written intro.');
    expect(second).toContain('## Findings\n\nWritten by a person.');
    const sections = readSections(second);
    expect([...sections.keys()].sort()).toEqual([5, 7]);
    expect(sections.get(5)?.facts.date).toBe('2026-02-02T10:00:00.000Z');
    expect(sections.get(5)?.run.rows[0]?.comparison?.ratio).toBe(2);
    expect(sections.get(7)?.facts.date).toBe('2026-01-01T10:00:00.000Z');
    expect(second.indexOf('### 5.')).toBeLessThan(second.indexOf('### 7.'));
    expect(second.split(GENERATED_START)).toHaveLength(2);
  });

  it('keeps the data comments valid HTML comments even when strings hold "--"', () => {
    const doc = updateBenchmarksDoc(
      undefined,
      { facts: facts('2026-01-01T10:00:00.000Z'), runs: [run(6, 'npm run bench -- --smoke', 1)] },
      [],
      skeleton,
    );
    const dataLine = doc.split('\n').find((line) => line.startsWith('<!-- bench:data '));
    expect(dataLine?.slice(4, -3)).not.toContain('--');
    expect(readSections(doc).get(6)?.run.rows[0]?.case).toBe('npm run bench -- --smoke');
    expect(readSections(doc).get(6)?.run.measuredAs).toBe('ops/s -- of one caller');
  });

  it('records a failed benchmark with its error', () => {
    const failed: BenchmarkRun = { ...run(8, 'x', 1), rows: [], error: 'Docker is down' };
    const doc = updateBenchmarksDoc(
      undefined,
      { facts: facts('2026-01-01T10:00:00.000Z'), runs: [failed] },
      [],
      skeleton,
    );
    expect(doc).toContain('**The benchmark failed:** Docker is down');
    expect(doc).toContain('ERROR: Docker is down');
  });

  it('appends the block to a file without markers', () => {
    const doc = updateBenchmarksDoc(
      'Old text.\n',
      { facts: facts('2026-01-01T10:00:00.000Z'), runs: [] },
      [],
      skeleton,
    );
    expect(doc.startsWith('Old text.\n\n<!-- bench:generated:start -->')).toBe(true);
    expect(doc).toContain('No full run recorded yet.');
    expect(doc.trimEnd().endsWith(GENERATED_END)).toBe(true);
  });

  it('refuses a file with one marker or unreadable data', () => {
    const report = { facts: facts('2026-01-01T10:00:00.000Z'), runs: [] };
    expect(() => updateBenchmarksDoc(`x\n${GENERATED_START}\n`, report, [], skeleton)).toThrow(
      BenchDocError,
    );
    expect(() =>
      updateBenchmarksDoc(
        `${GENERATED_START}\n<!-- bench:data {not json -->\n${GENERATED_END}\n`,
        report,
        [],
        skeleton,
      ),
    ).toThrow('not valid JSON');
    expect(() =>
      updateBenchmarksDoc(
        `${GENERATED_START}\n<!-- bench:data {"run":{}} -->\n${GENERATED_END}\n`,
        report,
        [],
        skeleton,
      ),
    ).toThrow('lacks run.id');
  });
});
