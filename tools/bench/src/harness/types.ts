/**
 * The goal of a comparison, stated on the ratio `ours / reference`:
 * `at-most` for costs (latency: lower is better), `at-least` for rates (ops/s, tokens/s).
 */
export interface Goal {
  kind: 'at-most' | 'at-least';
  ratio: number;
}

export type Verdict = 'met' | 'missed';

/** How one measured case relates to its floor or peer measured in the same run. */
export interface Comparison {
  /** What the case was compared with, e.g. `official SqliteSaver` or `spawn('true')`. */
  against: string;
  /** The reference's figures, formatted like {@link ResultRow.figures}. */
  againstFigures: string;
  /** `ours / reference` of the headline metric (p50 latency, median ops/s, ...). */
  ratio: number;
  /** Absent: the ratio is reported for information only. */
  goal?: Goal;
  /** Present exactly when `goal` is. */
  verdict?: Verdict;
}

/** One line of a benchmark's result table. */
export interface ResultRow {
  /** e.g. `SQLite put`. Unique within its benchmark. */
  case: string;
  /** Human-readable figures, e.g. `p50 1.20 ms · p99 3.40 ms`. */
  figures: string;
  /** The same figures as numbers (ms, ops/s, bytes), for machine-readable output. */
  metrics: Record<string, number>;
  /** The floor (or the one reference) of the case. */
  comparison?: Comparison;
  /** Peers measured in the same run, each `ours / peer` (one table line each, under the row). */
  peers?: Comparison[];
  /** Set when a case has an absolute requirement (e.g. `0 errors`) that failed. */
  failure?: string;
}

export interface BenchmarkOutput {
  rows: ResultRow[];
  /** Facts a reader needs to interpret the rows (sizes, method, caveats). */
  notes: string[];
  /**
   * Files for the docs (e.g. a plot), written to `benchmarks/<name>` beside the results file
   * when the run writes docs; a note links them.
   */
  files?: { name: string; content: string }[];
}

/** What a benchmark gets from the harness. */
export interface BenchContext {
  /** Tiny sizes: the whole suite must finish in about a minute. */
  smoke: boolean;
  /** Absolute path of the repository (where nx.json is). */
  repoRoot: string;
  /** A fresh directory for this benchmark's files, removed afterwards. */
  tmpDir: string;
  /** When set, spawned processes (servers) write V8 CPU profiles here. */
  profileDir: string | undefined;
  /** Progress output (stderr of the CLI); never part of the result. */
  log(line: string): void;
  /** `smoke` value in smoke mode, `full` otherwise. */
  size<T>(smoke: T, full: T): T;
  /** `--minutes`: how long a timed benchmark (the soak) runs; undefined: its own default. */
  minutes: number | undefined;
}

/**
 * One benchmark of the table in docs/benchmarks.md. `id` is its number there and is stable:
 * `--only` selects by it, and the docs writer keeps the last result per id.
 */
export interface Benchmark {
  id: number;
  /** A name `--only` also accepts (e.g. `fuzz`): a lowercase word. */
  name?: string;
  /**
   * Runs only when `--only` names it (a long run such as the soak), not in a full run; the
   * smoke run includes it at its smoke size.
   */
  standalone?: boolean;
  title: string;
  /** What is measured and how (the "measured as" column). */
  measuredAs: string;
  /** The floor or peer it is compared with in the same run, or `—`. */
  comparedWith: string;
  /** The goal as the issue states it, e.g. `p50 ≤ 1.5× the floor`. */
  goal: string;
  run(ctx: BenchContext): Promise<BenchmarkOutput>;
}

/** A benchmark of the plan that is not registered yet (shown as such in the docs). */
export interface PlannedBenchmark {
  id: number;
  title: string;
  measuredAs: string;
  comparedWith: string;
  goal: string;
  /** Why it is not measured yet. */
  blockedOn: string;
}

/** The facts a number is meaningless without. */
export interface MachineFacts {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  nodeVersion: string;
  platform: string;
  /** 1-minute load average when the run started: this machine is shared. */
  loadAverage: number;
}

export interface RunFacts {
  /** ISO timestamp of the start of the run. */
  date: string;
  /** `git rev-parse HEAD`, suffixed `+changes` when the working tree differs from it. */
  commit: string;
  machine: MachineFacts;
  smoke: boolean;
}

/** One benchmark's outcome in one run. */
export interface BenchmarkRun {
  id: number;
  title: string;
  measuredAs: string;
  comparedWith: string;
  goal: string;
  durationMs: number;
  rows: ResultRow[];
  notes: string[];
  /** Set when the benchmark threw; rows are then empty. */
  error?: string;
}

export interface RunReport {
  facts: RunFacts;
  runs: BenchmarkRun[];
  /** The runs' files for the docs (kept apart: the docs record the runs themselves). */
  files?: { name: string; content: string }[];
}
