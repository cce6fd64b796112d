import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

/**
 * What the processes a spec started wrote, so that a failing test shows it (issue 31: an
 * intermittent cluster failure said only `ECONNRESET`; the node's stderr said why it died).
 *
 * Every helper that starts a process tracks it here (`startServerProcess` does for every server,
 * `startCluster` for HAProxy, `startPrivatePostgres` for its log file); a spec tracks what it
 * spawns itself with {@link trackOutput}. The registry is per spec file (jest gives each file its
 * own module registry). When a test fails, the hooks of `print-logs-on-failure.ts` (told by the
 * test environment `environment.ts`) print the tail of every process that was running during
 * that test. See apps/server-e2e/README.md.
 */

/** What a spawned process wrote: lines of stdout and chunks of stderr (or whole strings). */
export interface ProcessOutput {
  stdout: string[] | string;
  stderr: string[] | string;
}

interface Tracked {
  name: string;
  read: () => ProcessOutput;
  startedAt: number;
  /** How it ended (`exit code 1`, `signal SIGKILL`), once it has. */
  ended?: { at: number; how: string };
  /** What identifies the output (its stdout array, else the object), so tracking it again only renames it. */
  source: object;
}

/** The last lines of each stream shown per process. */
export const TAIL_LINES = 200;
/** Longer lines are cut (a request log line is ~1 KB; a stack trace sits on one JSON line). */
const MAX_LINE_CHARS = 4000;

const tracked: Tracked[] = [];

/**
 * Tracks `output` (kept up to date by its owner, e.g. a `ServerProcess`) under `name`; with
 * `child`, how the process ended is shown too and it is left out of the logs of tests that start
 * after it ended. Tracking the same output again only renames it. Returns `output`.
 */
export function trackOutput<T extends ProcessOutput>(
  name: string,
  output: T,
  child?: ChildProcess,
): T {
  // A ServerProcess shares its stdout array with what startServerProcess tracked.
  const source = Array.isArray(output.stdout) ? output.stdout : output;
  const known = tracked.find((entry) => entry.source === source);
  if (known) {
    if (!known.name.includes(name)) known.name = `${name}: ${known.name}`;
    return output;
  }
  const entry: Tracked = { name, read: () => output, startedAt: Date.now(), source };
  tracked.push(entry);
  if (child) watchExit(entry, child);
  return output;
}

/** Tracks a process that writes its log to `file` (read when the logs are printed). */
export function trackLogFile(name: string, file: string): void {
  const read = (): ProcessOutput => ({
    stdout: existsSync(file) ? readFileSync(file, 'utf8') : `(${file} is gone)`,
    stderr: [],
  });
  tracked.push({ name, read, startedAt: Date.now(), source: { file } });
}

function watchExit(entry: Tracked, child: ChildProcess): void {
  const ended = (code: number | null, signal: NodeJS.Signals | null) => {
    entry.ended = { at: Date.now(), how: signal ? `signal ${signal}` : `exit code ${code}` };
  };
  if (child.exitCode !== null || child.signalCode !== null) {
    ended(child.exitCode, child.signalCode);
  } else {
    child.once('exit', ended);
  }
}

/** Everything every process tracked since the spec file began wrote (so far), for assertions. */
export function allTrackedOutput(): string {
  return tracked
    .map((entry) => {
      const output = entry.read();
      return `${lines(output.stdout).join('\n')}\n${lines(output.stderr, true).join('\n')}`;
    })
    .join('\n');
}

/**
 * The tail of each process tracked that was running at some point since `since` (ms since the
 * epoch; 0 for every process of the file), as one printable block.
 */
export function formatTrackedOutput(since: number): string {
  const relevant = tracked.filter((entry) => !entry.ended || entry.ended.at >= since);
  if (relevant.length === 0) return '(no process of this spec file was running)';
  return relevant
    .map((entry) => {
      const output = entry.read();
      const state = entry.ended ? `ended: ${entry.ended.how}` : 'still running';
      return [
        `===== ${entry.name} (${state}) =====`,
        ...section('stdout', lines(output.stdout)),
        ...section('stderr', lines(output.stderr, true)),
      ].join('\n');
    })
    .join('\n');
}

function section(label: string, written: string[]): string[] {
  // A trailing newline leaves an empty last line; it is not output.
  const all = written.at(-1) === '' ? written.slice(0, -1) : written;
  if (all.length === 0) return [`--- ${label}: (nothing) ---`];
  const tail = all.slice(-TAIL_LINES);
  const head =
    tail.length < all.length ? `last ${tail.length} of ${all.length} lines` : `${all.length} lines`;
  return [
    `--- ${label} (${head}) ---`,
    ...tail.map((line) =>
      line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)} …[cut]` : line,
    ),
  ];
}

/** stdout arrays hold lines, stderr arrays chunks (see {@link ProcessOutput}). */
function lines(output: string[] | string, chunks = false): string[] {
  const text = Array.isArray(output) ? output.join(chunks ? '' : '\n') : output;
  return text.split('\n');
}
