import { readSections, updateBenchmarksDoc } from './src/harness/docs-writer';
import { runBenchmarks } from './src/harness/runner';
import { PEER_LINE_CASE, tableRows } from './src/harness/table';
import type { RunReport } from './src/harness/types';
import { ensurePeersInstalled } from './src/peers/install';
import { BENCHMARKS, PLANNED } from './src/registry';
import { findRepoRoot } from './src/support/repo';
import { collectServerLogs } from './src/support/server-process';

/**
 * Every registered benchmark at --smoke sizes, end to end (built server, PostgreSQL, Docker, the
 * peers): proves they run and produce well-formed results. Timings are never asserted; they depend
 * on the machine.
 */
describe('npm run bench -- --smoke', () => {
  const repoRoot = findRepoRoot(__dirname);
  let report: RunReport;

  // The peers' package (tools/bench/peers), installed the way `npm run bench` installs it on first
  // use (a no-op when installed and its lock file unchanged); its own hook, so a first install
  // does not eat the run's time.
  beforeAll(async () => {
    await ensurePeersInstalled(repoRoot, (line) => void process.stderr.write(`${line}\n`));
  }, 600_000);

  beforeAll(async () => {
    report = await runBenchmarks(BENCHMARKS, {
      smoke: true,
      only: undefined,
      repoRoot,
      profileDir: undefined,
      // Streamed: which benchmark ran how long, and what a failing one said, is in the output.
      log: (line) => void process.stderr.write(`${line}\n`),
      // A failing benchmark prints the logs of the servers it started.
      collectLogs: collectServerLogs,
    });
    // Seventeen benchmarks, each starting servers (and peers in 1 and 19): 2.5 minutes alone on 2 cores,
    // three to four times that beside the e2e suite in `npm test` (434 s on a quiet CI run). The
    // limit only stops a hang; every benchmark bounds its own waits.
  }, 1_200_000);

  it('runs every registered benchmark without an error', () => {
    expect(report.runs.map((run) => [run.id, run.error])).toEqual(
      BENCHMARKS.map((b) => [b.id, undefined]).sort((a, b) => Number(a[0]) - Number(b[0])),
    );
  });

  it('gives each benchmark uniquely named rows with finite, non-negative figures', () => {
    // A failed case with its benchmark's notes (a fuzz finding names the request), so the
    // failure explains itself.
    const failed = report.runs.flatMap((run) =>
      run.rows
        .filter((row) => row.failure !== undefined)
        .map((row) => ({ id: run.id, case: row.case, failure: row.failure, notes: run.notes })),
    );
    expect(failed).toEqual([]);
    for (const run of report.runs) {
      expect(run.rows.length).toBeGreaterThan(0);
      expect(new Set(run.rows.map((row) => row.case)).size).toBe(run.rows.length);
      for (const row of run.rows) {
        const values = Object.values(row.metrics);
        expect(values.length).toBeGreaterThan(0);
        expect(values.every((v) => Number.isFinite(v) && v >= 0)).toBe(true);
      }
    }
  });

  it('compares with a floor or peer, with a verdict exactly where a goal is set', () => {
    const comparisons = report.runs.flatMap((run) =>
      run.rows.flatMap((row) => row.comparison ?? []),
    );
    // 5 (checkpointer), 6 (history), 7 (sandbox), 9 (event log cost) compare; 8 (startup) reports only.
    expect(comparisons.length).toBeGreaterThanOrEqual(8);
    for (const c of comparisons) {
      expect(Number.isFinite(c.ratio) && c.ratio > 0).toBe(true);
      expect(c.verdict === undefined).toBe(c.goal === undefined);
    }
    const startup = report.runs.find((run) => run.id === 8);
    expect(startup?.rows.every((row) => row.comparison === undefined)).toBe(true);
  });

  it('measures the peers beside us in benchmark 1, each row against the peer on its storage', () => {
    const turn = report.runs.find((run) => run.id === 1);
    const peers = turn?.rows.flatMap((row) => row.peers ?? []) ?? [];
    expect(peers.map((peer) => peer.against).sort()).toEqual([
      'LangGraph API server (in-memory)',
      'Mastra (LibSQL)',
      'Mastra (PostgreSQL)',
    ]);
    for (const peer of peers) {
      expect(Number.isFinite(peer.ratio) && peer.ratio > 0).toBe(true);
      expect(peer.goal).toEqual({ kind: 'at-most', ratio: 1 });
      expect(peer.verdict).toBeDefined();
    }
  });

  it('prints one table row per result row and records the run in the docs format', () => {
    const rows = tableRows(report.runs);
    const peerLines = report.runs.reduce(
      (n, run) => n + run.rows.reduce((m, row) => m + (row.peers?.length ?? 0), 0),
      0,
    );
    expect(rows).toHaveLength(report.runs.reduce((n, run) => n + run.rows.length, 0) + peerLines);
    expect(rows.filter((cells) => cells[1] === PEER_LINE_CASE)).toHaveLength(peerLines);
    const doc = updateBenchmarksDoc(undefined, report, PLANNED, '# Benchmarks\n');
    const sections = readSections(doc);
    expect([...sections.keys()].sort()).toEqual(BENCHMARKS.map((b) => b.id).sort());
    expect(sections.get(5)?.run.rows).toEqual(report.runs.find((r) => r.id === 5)?.rows);
    expect(sections.get(1)?.run.rows).toEqual(report.runs.find((r) => r.id === 1)?.rows);
    // Every benchmark of the plan has at least one row in the table.
    for (const id of [1, 2, 3, 4, 5, 6, 7, 8, 9]) expect(doc).toContain(`| ${id} | `);
  });
});
