import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { ExecutionBackend } from '@cognition/sandbox';
import {
  checkDockerAvailable,
  dockerConnectionFromEnv,
  createDockerSandbox,
} from '@cognition/sandbox-docker';
import { createLocalSandbox, DEFAULT_LOCAL_PATH } from '@cognition/sandbox-local';
import { sampleLatencies } from '../harness/measure';
import { compare, formatLatency, summarizeLatencies } from '../harness/stats';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';

/** Spawns `command args` with piped output and resolves once it exited and its pipes closed. */
function spawnAndWait(command: string, args: string[], env?: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(env ? { env } : {}),
    });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} exited with ${String(code)}: ${stderr}`));
    });
  });
}

async function execTrue(backend: ExecutionBackend): Promise<void> {
  const result = await backend.execute('true');
  if (result.exitCode !== 0) {
    throw new Error(
      `${backend.kind} sandbox: \`true\` exited with ${result.exitCode}: ${result.output}`,
    );
  }
}

const latencyMetrics = (prefix: string, s: ReturnType<typeof summarizeLatencies>) => ({
  [`${prefix}P50Ms`]: s.p50,
  [`${prefix}P99Ms`]: s.p99,
});

async function measureLocal(ctx: BenchContext): Promise<ResultRow> {
  const factory = createLocalSandbox();
  const backend = await factory.forSession('bench-local', path.join(ctx.tmpDir, 'local'));
  const floorEnv = { PATH: DEFAULT_LOCAL_PATH };
  try {
    const samples = await sampleLatencies(
      {
        ours: () => execTrue(backend),
        spawn: () => spawnAndWait('true', [], floorEnv),
      },
      { warmup: ctx.size(5, 50), samples: ctx.size(30, 500) },
    );
    const ours = summarizeLatencies(samples.ours);
    const floor = summarizeLatencies(samples.spawn);
    return {
      case: 'local backend, `execute("true")`',
      figures: formatLatency(ours),
      metrics: { ...latencyMetrics('ours', ours), ...latencyMetrics('spawn', floor) },
      comparison: compare(
        ours.p50,
        floor.p50,
        "child_process.spawn('true')",
        formatLatency(floor),
        {
          kind: 'at-most',
          ratio: 1.2,
        },
      ),
    };
  } finally {
    await factory.release('bench-local');
  }
}

async function measureDocker(ctx: BenchContext): Promise<ResultRow[]> {
  // DOCKER_HOST points the benchmark at another engine, as it does the `docker` CLI it compares with.
  const connection = dockerConnectionFromEnv(process.env);
  const availability = await checkDockerAvailable({ connection });
  ctx.log(`Docker ${availability.serverVersion}, image ${availability.image}`);
  // A prefix of its own: the benchmark's containers never collide with a server's or a test's.
  const factory = createDockerSandbox({ containerPrefix: 'cognition-bench-', connection });
  const run = randomBytes(4).toString('hex');
  const warmId = `warm-${run}`;
  const created: string[] = [warmId];
  try {
    const warm = await factory.forSession(warmId, path.join(ctx.tmpDir, warmId));
    await execTrue(warm);
    const container = factory.containerName(warmId);
    const warmSamples = await sampleLatencies(
      {
        ours: () => execTrue(warm),
        cli: () => spawnAndWait('docker', ['exec', container, 'true']),
      },
      { warmup: ctx.size(3, 20), samples: ctx.size(15, 200) },
    );
    const ours = summarizeLatencies(warmSamples.ours);
    const cli = summarizeLatencies(warmSamples.cli);

    ctx.log('first commands (container create)');
    const firstMs: number[] = [];
    for (let i = 0; i < ctx.size(2, 10); i += 1) {
      const id = `first-${run}-${i}`;
      created.push(id);
      const started = performance.now();
      const backend = await factory.forSession(id, path.join(ctx.tmpDir, id));
      await execTrue(backend);
      firstMs.push(performance.now() - started);
      await factory.release(id);
    }
    const first = summarizeLatencies(firstMs);
    return [
      {
        case: 'Docker backend, warm container, `execute("true")`',
        figures: formatLatency(ours),
        metrics: { ...latencyMetrics('ours', ours), ...latencyMetrics('cli', cli) },
        comparison: compare(
          ours.p50,
          cli.p50,
          '`docker exec <container> true` (CLI)',
          formatLatency(cli),
          {
            kind: 'at-most',
            ratio: 1.0,
          },
        ),
      },
      {
        case: 'Docker backend, first command of a session (container create + start + exec)',
        figures: formatLatency(first),
        metrics: latencyMetrics('first', first),
      },
    ];
  } finally {
    for (const id of created) await factory.release(id);
  }
}

export const sandboxExecBenchmark: Benchmark = {
  id: 7,
  title: 'Sandbox exec of `true`',
  measuredAs:
    'latency of `ExecutionBackend.execute("true")`: local backend; Docker backend on a warm container; Docker first command (container create)',
  comparedWith: '`child_process.spawn` of `true`; the `docker exec` CLI on the same container',
  goal: 'local ≤ 1.2× spawn; Docker warm ≤ 1.0× the CLI',
  async run(ctx) {
    const rows = [await measureLocal(ctx), ...(await measureDocker(ctx))];
    return {
      rows,
      notes: [
        'The spawn floor pipes stdout/stderr and waits for them to close, as capturing output requires; the local backend adds its process group, allowlisted environment and output collection.',
        'The Docker backend talks to the engine over its socket (dockerode) and wraps each command in `sh -c` with `setsid` so it can be signalled; the CLI floor runs `docker exec` (a Go process, one API round trip sequence) on the same container. Both use the image `cognition-sandbox:latest`.',
        'Calls alternate between ours and the floor so both see the same machine load.',
      ],
    };
  },
};
