import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { processCpuMs } from './process-cpu';

/**
 * CPU time (µs) LangChain's ChatOpenAI alone spends per streamed chunk: `model-client-cpu.mjs` in
 * its own process streams `repetitions` answers of `tokens` chunks from the model at `modelUrl`
 * (after one warm-up stream); its user + system time (/proc) is read around each stream. Returns
 * one figure per repetition. @throws Error when a stream did not deliver every chunk.
 */
export async function modelClientCpuUsPerChunk(
  repoRoot: string,
  options: { modelUrl: string; model: string; tokens: number; repetitions: number },
): Promise<number[]> {
  const script = path.join(repoRoot, 'tools/bench/src/support/model-client-cpu.mjs');
  const child = spawn(process.execPath, [script], {
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      BENCH_MODEL_URL: options.modelUrl,
      BENCH_MODEL: options.model,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-8_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const nextLine = async (): Promise<string> => {
    const next: IteratorResult<string> = await lines.next();
    if (next.done) throw new Error(`model-client-cpu.mjs exited:\n${stderr}`);
    return next.value;
  };
  try {
    const pid = child.pid;
    if (pid === undefined) throw new Error('model-client-cpu.mjs has no pid');
    if ((await nextLine()) !== 'ready') throw new Error(`model-client-cpu.mjs:\n${stderr}`);
    const figures: number[] = [];
    for (let r = 0; r < options.repetitions; r += 1) {
      const before = processCpuMs(pid);
      child.stdin.write('go\n');
      const answer = await nextLine();
      const cpuMs = processCpuMs(pid) - before;
      const chunks = Number(/^done (\d+)$/.exec(answer)?.[1]);
      if (chunks !== options.tokens) {
        throw new Error(`ChatOpenAI alone: ${answer}, ${options.tokens} chunks were sent`);
      }
      figures.push((cpuMs * 1000) / chunks);
    }
    return figures;
  } finally {
    child.stdin.end();
    await exited;
  }
}
