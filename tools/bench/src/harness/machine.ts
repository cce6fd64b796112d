import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { formatBytes } from './stats';
import type { MachineFacts, RunFacts } from './types';

function machineFacts(): MachineFacts {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    memoryBytes: os.totalmem(),
    nodeVersion: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    loadAverage: os.loadavg()[0] ?? 0,
  };
}

/**
 * The commit the working tree is at, `+changes` when tracked files differ from it; `unknown`
 * outside a git checkout. Read-only: `--no-optional-locks` keeps git from refreshing the index.
 */
function currentCommit(repoRoot: string): string {
  const git = (...args: string[]): string =>
    execFileSync('git', ['--no-optional-locks', ...args], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  try {
    const head = git('rev-parse', '--short=12', 'HEAD');
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
    return dirty ? `${head}+changes` : head;
  } catch {
    return 'unknown';
  }
}

export function runFacts(repoRoot: string, smoke: boolean, date = new Date()): RunFacts {
  return {
    date: date.toISOString(),
    commit: currentCommit(repoRoot),
    machine: machineFacts(),
    smoke,
  };
}

/** One line, e.g. `AMD EPYC 7B13 · 2 cores · 23.5 GiB · Node v20.20.0 · linux … · load 3.1`. */
export function describeMachine(machine: MachineFacts): string {
  return [
    machine.cpuModel,
    `${machine.cores} cores`,
    formatBytes(machine.memoryBytes),
    `Node ${machine.nodeVersion}`,
    machine.platform,
    `load average ${machine.loadAverage.toFixed(1)} at start`,
  ].join(' · ');
}
