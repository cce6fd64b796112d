import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A full collection of a server's heap takes well under a second; this allows for a loaded machine. */
const READING_TIMEOUT_MS = 60_000;
const POLL_MS = 50;

/**
 * Node flags and environment that let `liveHeapBytes` read a process's live heap: heap-probe.cjs
 * preloaded, writing into `dir`. A measurement hook only: it does nothing until SIGUSR2.
 */
export function heapProbe(
  repoRoot: string,
  dir: string,
): { nodeArgs: string[]; env: Record<string, string> } {
  return {
    nodeArgs: ['--require', path.join(repoRoot, 'tools/bench/src/support/heap-probe.cjs')],
    env: { HEAP_PROBE_DIR: dir },
  };
}

/**
 * The live heap of process `pid` (started with `heapProbe(…, dir)`): V8's used heap size right
 * after a full garbage collection. `reading` counts the readings of that process, from 1.
 */
export async function liveHeapBytes(pid: number, dir: string, reading: number): Promise<number> {
  process.kill(pid, 'SIGUSR2');
  const file = path.join(dir, `heap-${pid}.json`);
  const deadline = Date.now() + READING_TIMEOUT_MS;
  while (Date.now() < deadline) {
    await sleep(POLL_MS);
    try {
      const probe = JSON.parse(await readFile(file, 'utf8')) as {
        readings: number;
        usedHeapBytes: number;
      };
      if (probe.readings === reading) return probe.usedHeapBytes;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  throw new Error(`process ${pid} reported no live heap within ${READING_TIMEOUT_MS} ms`);
}
