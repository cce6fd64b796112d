import type { ChildProcess } from 'node:child_process';
import path from 'node:path';

const REPORT = /^soak-heap-after-gc (\d+)$/m;
const REPORT_TIMEOUT_MS = 30_000;

/** NODE_OPTIONS that preload the heap probe (`heap-probe.cjs`) into a server process. */
export function heapProbeNodeOptions(repoRoot: string): string {
  const probe = path.join(repoRoot, 'tools/bench/src/benchmarks/soak/heap-probe.cjs');
  return `--expose-gc --require ${probe}`;
}

/**
 * The V8 heap used by `child` right after a full garbage collection: what it retains. The child
 * runs with {@link heapProbeNodeOptions}; it collects on SIGUSR2 and reports on stderr.
 */
export function heapAfterGc(child: ChildProcess): Promise<number> {
  const stderr = child.stderr;
  if (!stderr) return Promise.reject(new Error('the server’s stderr is not piped'));
  return new Promise((resolve, reject) => {
    let seen = '';
    const finish = (): void => {
      clearTimeout(timer);
      stderr.off('data', take);
    };
    const take = (chunk: Buffer): void => {
      seen += chunk.toString('utf8');
      const match = REPORT.exec(seen);
      if (!match) return;
      finish();
      resolve(Number(match[1]));
    };
    const timer = setTimeout(() => {
      finish();
      reject(
        new Error(`no heap report within ${REPORT_TIMEOUT_MS} ms of SIGUSR2; stderr: ${seen}`),
      );
    }, REPORT_TIMEOUT_MS);
    stderr.on('data', take);
    child.kill('SIGUSR2');
  });
}
