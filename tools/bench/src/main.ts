import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { BenchArgsError, parseBenchArgs, USAGE } from './harness/cli-args';
import { updateBenchmarksDoc } from './harness/docs-writer';
import { describeMachine } from './harness/machine';
import { allGoalsMet, runBenchmarks, selectBenchmarks } from './harness/runner';
import { TABLE_HEADER, tableRows, textTable } from './harness/table';
import type { RunReport } from './harness/types';
import { BENCHMARKS, PLANNED } from './registry';
import { formatProfileSummary, summarizeProfiles } from './support/cpu-profile';
import { findRepoRoot } from './support/repo';
import { collectServerLogs } from './support/server-process';

/** The start of docs/benchmarks.md when the file does not exist yet. */
const DOC_SKELETON = `# Benchmarks

Measured by \`npm run bench\` (tools/bench). Each benchmark is compared with a floor or a peer
measured in the same run on the same machine; the ratio is ours / reference.
`;

const write = (text: string): void => void process.stdout.write(text);
const log = (line: string): void => void process.stderr.write(`${line}\n`);

/** Profiles this process (the in-process benchmarks) until the returned function is called. */
async function startSelfProfile(dir: string): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(
      path.join(dir, `bench-process-${process.pid}.cpuprofile`),
      JSON.stringify(profile),
    );
    session.disconnect();
  };
}

/** The repository's Prettier style, so `npm run format:check` accepts the written file. */
async function formatMarkdown(text: string, filepath: string): Promise<string> {
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(filepath)) ?? {};
  return prettier.format(text, { ...options, filepath });
}

function printReport(report: RunReport): void {
  write(
    `\nCognition benchmarks${report.facts.smoke ? ' (SMOKE sizes: not representative)' : ''}\n` +
      `${report.facts.date} · commit ${report.facts.commit}\n${describeMachine(report.facts.machine)}\n\n`,
  );
  write(`${textTable(TABLE_HEADER, tableRows(report.runs))}\n\n`);
  for (const run of report.runs) {
    for (const note of run.notes) write(`[${run.id}] ${note}\n`);
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const repoRoot = findRepoRoot(__dirname);
  const args = parseBenchArgs(argv, path.join(repoRoot, 'docs/benchmarks.md'));
  if (args.help) {
    write(USAGE);
    return 0;
  }
  const selected = selectBenchmarks(BENCHMARKS, PLANNED, args.only);
  const profileDir = args.profileDir ? path.resolve(args.profileDir) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const stopProfile = profileDir ? await startSelfProfile(profileDir) : undefined;

  const report = await runBenchmarks(selected, {
    smoke: args.smoke,
    only: args.only,
    repoRoot,
    profileDir,
    minutes: args.minutes,
    log,
    // A smoke run is a check: a benchmark that fails prints the logs of the servers it started.
    ...(args.smoke ? { collectLogs: collectServerLogs } : {}),
  });
  await stopProfile?.();
  printReport(report);

  if (profileDir) {
    write(`\nCPU profiles in ${profileDir}:\n`);
    for (const summary of summarizeProfiles(profileDir))
      write(`${formatProfileSummary(summary)}\n\n`);
  }
  if (args.docsPath) {
    const docsPath = path.resolve(args.docsPath);
    const existing = existsSync(docsPath) ? readFileSync(docsPath, 'utf8') : undefined;
    const doc = updateBenchmarksDoc(existing, report, PLANNED, DOC_SKELETON);
    writeFileSync(docsPath, await formatMarkdown(doc, docsPath));
    for (const file of report.files ?? []) {
      const target = path.join(path.dirname(docsPath), 'benchmarks', file.name);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, file.content);
    }
    write(`Results written to ${path.relative(repoRoot, docsPath) || docsPath}\n`);
  }
  const failed = report.runs.some(
    (run) => run.error !== undefined || run.rows.some((row) => row.failure),
  );
  if (!failed && !allGoalsMet(report)) write('Some goals were missed (see the verdict column).\n');
  return failed ? 1 : 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    // Exit explicitly: a keep-alive socket to a stopped server must not hold the process.
    (code) => process.exit(code),
    (error: unknown) => {
      if (error instanceof BenchArgsError) {
        log(`${error.message}\n\n${USAGE}`);
        process.exit(2);
      }
      log(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exit(1);
    },
  );
}
