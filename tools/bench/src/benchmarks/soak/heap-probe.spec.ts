import { spawn } from 'node:child_process';
import path from 'node:path';
import { heapAfterGc, heapProbeNodeOptions } from './heap-probe';

const REPO_ROOT = path.resolve(__dirname, '../../../../..');

// Builds about 40 MB of objects (promoted to the old generation while they are referenced),
// drops them, prints the heap used, and waits: the garbage stays until a major GC.
const GARBAGE = `
let junk = Array.from({ length: 400000 }, (_, i) => ({ i, text: 'x'.repeat(40) + i }));
junk = null;
process.stdout.write(process.memoryUsage().heapUsed + '\\n');
setInterval(() => undefined, 1000);
`;

describe('heapAfterGc (the soak reads what a server retains, not its garbage)', () => {
  it('collects the garbage before it reads the heap', async () => {
    const child = spawn(process.execPath, ['-e', GARBAGE], {
      env: { ...process.env, NODE_OPTIONS: heapProbeNodeOptions(REPO_ROOT) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
    try {
      const before = await new Promise<number>((resolve, reject) => {
        child.stdout.once('data', (chunk: Buffer) => resolve(Number(String(chunk).trim())));
        child.once('exit', (code) => reject(new Error(`the child exited (${code}): ${log}`)));
      });
      const after = await heapAfterGc(child);
      expect({ before, after, log }).toEqual({
        before,
        after: expect.any(Number) as number,
        log: `soak-heap-after-gc ${after}\n`,
      });
      expect(before - after).toBeGreaterThan(20 * 1024 * 1024);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
