import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BenchArgsError } from './cli-args';
import { allGoalsMet, runBenchmarks, selectBenchmarks } from './runner';
import type { Benchmark, BenchContext, PlannedBenchmark } from './types';

function benchmark(id: number, run: Benchmark['run']): Benchmark {
  return { id, title: `b${id}`, measuredAs: 'm', comparedWith: 'c', goal: 'g', run };
}

const planned: PlannedBenchmark[] = [
  { id: 1, title: 'Turn', measuredAs: '', comparedWith: '', goal: '', blockedOn: 'agent runs' },
];

describe('selectBenchmarks', () => {
  const registered = [
    benchmark(7, () => Promise.resolve({ rows: [], notes: [] })),
    benchmark(5, () => Promise.resolve({ rows: [], notes: [] })),
  ];

  it('returns every registered benchmark in id order, or the ones asked for', () => {
    expect(selectBenchmarks(registered, planned, undefined).map((b) => b.id)).toEqual([5, 7]);
    expect(selectBenchmarks(registered, planned, [7]).map((b) => b.id)).toEqual([7]);
  });

  it('selects a benchmark by its name, and names --only for an unknown one', () => {
    const named = [
      ...registered,
      { ...benchmark(15, () => Promise.resolve({ rows: [], notes: [] })), name: 'fuzz' },
    ];
    expect(selectBenchmarks(named, planned, ['fuzz']).map((b) => b.id)).toEqual([15]);
    expect(() => selectBenchmarks(named, planned, ['soak'])).toThrow(
      new BenchArgsError('--only', 'there is no benchmark named soak (named: fuzz)'),
    );
  });

  it('leaves a standalone benchmark (the soak) out of a full run, and runs it when named', () => {
    const withSoak = [
      ...registered,
      {
        ...benchmark(17, () => Promise.resolve({ rows: [], notes: [] })),
        name: 'soak',
        standalone: true,
      },
    ];
    expect(selectBenchmarks(withSoak, planned, undefined).map((b) => b.id)).toEqual([5, 7]);
    expect(selectBenchmarks(withSoak, planned, ['soak']).map((b) => b.id)).toEqual([17]);
    expect(selectBenchmarks(withSoak, planned, [17]).map((b) => b.id)).toEqual([17]);
  });

  it('explains why a planned benchmark cannot run, and names --only', () => {
    expect(() => selectBenchmarks(registered, planned, [1])).toThrow(
      new BenchArgsError('--only', 'benchmark 1 (Turn) is not registered yet: agent runs'),
    );
    expect(() => selectBenchmarks(registered, planned, [9])).toThrow(
      'there is no benchmark 9 (registered: 7, 5)',
    );
  });
});

describe('runBenchmarks', () => {
  let repoRoot: string;
  beforeAll(() => {
    repoRoot = mkdtempSync(path.join(os.tmpdir(), 'cognition-bench-runner-spec-'));
  });
  afterAll(() => rmSync(repoRoot, { recursive: true, force: true }));

  it('runs each benchmark with smoke sizes and a temp dir, recording a failure and going on', async () => {
    const seen: BenchContext[] = [];
    const logs: string[] = [];
    const report = await runBenchmarks(
      [
        benchmark(5, () => Promise.reject(new Error('Postgres is down'))),
        benchmark(6, (ctx) => {
          seen.push(ctx);
          return Promise.resolve({
            rows: [{ case: 'x', figures: '1 ms', metrics: { ms: ctx.size(1, 2) } }],
            notes: ['n'],
          });
        }),
      ],
      { smoke: true, only: undefined, repoRoot, profileDir: undefined, log: (l) => logs.push(l) },
    );
    expect(report.facts.smoke).toBe(true);
    expect(report.facts.commit).toBe('unknown');
    expect(report.runs.map((r) => [r.id, r.error])).toEqual([
      [5, 'Postgres is down'],
      [6, undefined],
    ]);
    expect(report.runs[1]?.rows[0]?.metrics).toEqual({ ms: 1 });
    expect(seen[0]?.tmpDir.startsWith(os.tmpdir())).toBe(true);
    expect(logs).toContain('[bench 5] failed: Postgres is down');
    expect(allGoalsMet(report)).toBe(false);
  });

  it('prints the collected logs of a benchmark that throws or has a failed case, only of it', async () => {
    const logs: string[] = [];
    let collected = 0;
    const stopped: number[] = [];
    const collectLogs = () => {
      const n = (collected += 1);
      return { report: () => [`log line of collection ${n}`], stop: () => void stopped.push(n) };
    };
    const ok = { case: 'ok', figures: '', metrics: {} };
    await runBenchmarks(
      [
        benchmark(1, () => Promise.reject(new Error('boom'))),
        benchmark(2, () => Promise.resolve({ rows: [ok], notes: [] })),
        benchmark(3, () =>
          Promise.resolve({ rows: [{ ...ok, failure: '2 failed turns' }], notes: [] }),
        ),
      ],
      {
        smoke: true,
        only: undefined,
        repoRoot,
        profileDir: undefined,
        log: (l) => logs.push(l),
        collectLogs,
      },
    );
    expect(logs.filter((l) => l.includes('log line'))).toEqual([
      '[bench 1] log line of collection 1',
      '[bench 3] log line of collection 3',
    ]);
    expect(stopped).toEqual([1, 2, 3]);
  });

  it('treats a missed goal or a failed case as not all goals met', async () => {
    const row = (verdict: 'met' | 'missed') => ({
      case: verdict,
      figures: '',
      metrics: {},
      comparison: {
        against: 'p',
        againstFigures: '',
        ratio: 1,
        goal: { kind: 'at-most' as const, ratio: 1 },
        verdict,
      },
    });
    const options = {
      smoke: false,
      only: undefined,
      repoRoot,
      profileDir: undefined,
      log: () => undefined,
    };
    const met = await runBenchmarks(
      [
        benchmark(1, () =>
          Promise.resolve({
            rows: [row('met'), { case: 'r', figures: '', metrics: {} }],
            notes: [],
          }),
        ),
      ],
      options,
    );
    expect(allGoalsMet(met)).toBe(true);
    const missed = await runBenchmarks(
      [benchmark(1, () => Promise.resolve({ rows: [row('missed')], notes: [] }))],
      options,
    );
    expect(allGoalsMet(missed)).toBe(false);
    const failed = await runBenchmarks(
      [
        benchmark(1, () =>
          Promise.resolve({
            rows: [{ case: 'f', figures: '', metrics: {}, failure: '3 errors' }],
            notes: [],
          }),
        ),
      ],
      options,
    );
    expect(allGoalsMet(failed)).toBe(false);
    const peerMissed = await runBenchmarks(
      [
        benchmark(1, () =>
          Promise.resolve({
            rows: [
              {
                ...row('met'),
                peers: [{ ...row('missed').comparison, against: 'peer' }],
              },
            ],
            notes: [],
          }),
        ),
      ],
      options,
    );
    expect(allGoalsMet(peerMissed)).toBe(false);
  });
});
