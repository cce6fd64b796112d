import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { BenchmarkSelector } from './cli-args';
import { BenchArgsError } from './cli-args';
import { runFacts } from './machine';
import type { Benchmark, BenchmarkRun, PlannedBenchmark, RunReport } from './types';

export interface RunOptions {
  smoke: boolean;
  only: readonly BenchmarkSelector[] | undefined;
  repoRoot: string;
  profileDir: string | undefined;
  /** `--minutes` (see `BenchContext.minutes`). */
  minutes?: number | undefined;
  log(line: string): void;
  /**
   * Starts keeping the logs of the processes a benchmark starts (called before each one); what
   * `report()` gives is printed when the benchmark throws or a case of it fails (the smoke run in
   * the test suite: a failure explains itself).
   */
  collectLogs?: () => { report(): string[]; stop(): void };
}

/**
 * The benchmarks `only` names (when undefined: every registered one but the standalone ones),
 * in id order.
 * @throws BenchArgsError naming `--only` for an id that is unknown or planned but not registered.
 */
export function selectBenchmarks(
  registered: readonly Benchmark[],
  planned: readonly PlannedBenchmark[],
  only: readonly BenchmarkSelector[] | undefined,
): Benchmark[] {
  const byId = new Map(registered.map((b) => [b.id, b]));
  if (byId.size !== registered.length) throw new Error('two benchmarks share an id');
  if (only === undefined) {
    return registered.filter((b) => !b.standalone).sort((a, b) => a.id - b.id);
  }
  return only.map((id) => {
    if (typeof id === 'string') {
      const named = registered.find((b) => b.name === id);
      if (named) return named;
      const names = registered.flatMap((b) => (b.name ? [b.name] : []));
      throw new BenchArgsError(
        '--only',
        `there is no benchmark named ${id} (named: ${names.join(', ')})`,
      );
    }
    const benchmark = byId.get(id);
    if (benchmark) return benchmark;
    const plan = planned.find((p) => p.id === id);
    throw new BenchArgsError(
      '--only',
      plan
        ? `benchmark ${id} (${plan.title}) is not registered yet: ${plan.blockedOn}`
        : `there is no benchmark ${id} (registered: ${[...byId.keys()].join(', ')})`,
    );
  });
}

/**
 * Runs the benchmarks one after another (never concurrently: they would measure each other),
 * each in its own temp directory. A benchmark that throws is recorded with its error and the
 * run goes on.
 */
export async function runBenchmarks(
  benchmarks: readonly Benchmark[],
  options: RunOptions,
): Promise<RunReport> {
  const facts = runFacts(options.repoRoot, options.smoke);
  const runs: BenchmarkRun[] = [];
  const files: NonNullable<RunReport['files']> = [];
  for (const benchmark of benchmarks) {
    const tmpDir = mkdtempSync(path.join(os.tmpdir(), `cognition-bench-${benchmark.id}-`));
    const started = performance.now();
    const base = {
      id: benchmark.id,
      title: benchmark.title,
      measuredAs: benchmark.measuredAs,
      comparedWith: benchmark.comparedWith,
      goal: benchmark.goal,
    };
    options.log(`[bench ${benchmark.id}] ${benchmark.title}`);
    const serverLogs = options.collectLogs?.() ?? null;
    try {
      const { files: written = [], ...output } = await benchmark.run({
        smoke: options.smoke,
        minutes: options.minutes,
        repoRoot: options.repoRoot,
        tmpDir,
        profileDir: options.profileDir,
        log: (line) => options.log(`[bench ${benchmark.id}] ${line}`),
        size: (smoke, full) => (options.smoke ? smoke : full),
      });
      const durationMs = performance.now() - started;
      runs.push({ ...base, durationMs, ...output });
      if (output.rows.some((row) => row.failure !== undefined)) {
        for (const line of serverLogs?.report() ?? [])
          options.log(`[bench ${benchmark.id}] ${line}`);
      }
      files.push(...written);
      // Progress for whoever watches a long run (and its time budget); the docs record it too.
      options.log(`[bench ${benchmark.id}] took ${(durationMs / 1000).toFixed(1)} s`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      options.log(`[bench ${benchmark.id}] failed: ${message}`);
      for (const line of serverLogs?.report() ?? []) options.log(`[bench ${benchmark.id}] ${line}`);
      runs.push({
        ...base,
        durationMs: performance.now() - started,
        rows: [],
        notes: [],
        error: message,
      });
    } finally {
      serverLogs?.stop();
      rmSync(tmpDir, { recursive: true, force: true });
    }
  }
  return { facts, runs, files };
}

/** True when every benchmark ran, no case failed and no goal (floor or peer) was missed. */
export function allGoalsMet(report: RunReport): boolean {
  return report.runs.every(
    (run) =>
      run.error === undefined &&
      run.rows.every(
        (row) =>
          !row.failure &&
          row.comparison?.verdict !== 'missed' &&
          (row.peers ?? []).every((peer) => peer.verdict !== 'missed'),
      ),
  );
}
