import { execFile, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify, stripVTControlCharacters } from 'node:util';
import { eventually } from './testing/agent-server';
import { http } from './testing/http';
import { trackOutput } from './testing/process-logs';
import { SERVER_BIN, SERVER_CLI, SERVER_MAIN } from './testing/paths';
import type { ServerProcess } from './testing/server-process';
import { startServerProcess, tempWorkspace } from './testing/server-process';

const run = promisify(execFile);

/** Runs a built entry point to completion and returns its exit code and output. */
async function runToExit(
  file: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [file, ...args], {
      env: { PATH: process.env['PATH'] ?? '', ...env },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** Runs a command that starts the server, returns its stdout up to the "listening" line, stops it. */
async function readUntilListening(command: string, args: string[]): Promise<string> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const errors: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => errors.push(chunk.toString('utf8')));
  trackOutput(
    `${path.basename(command)} ${args.join(' ')}`,
    {
      get stdout() {
        return output;
      },
      stderr: errors,
    },
    child,
  );
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line:\n${output}`)), 30_000);
      child.stdout.on('data', (chunk: Buffer) => {
        // pino-pretty colours its output on a terminal.
        output += stripVTControlCharacters(chunk.toString('utf8')).replace(/\r/g, '');
        if (output.includes('listening on')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', () => reject(new Error(`exited before listening:\n${output}`)));
    });
  } finally {
    // The whole group: `script` and `sh` forward nothing on their own.
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
  }
  return output;
}

/**
 * Opens a raw connection and sends the head and the first half of a POST /sessions body, so
 * the request is in flight on the server until `finish()` sends the rest.
 */
async function startSlowRequest(
  url: string,
  body: string,
): Promise<{ finish(): void; response: Promise<string> }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const bytes = Buffer.from(body, 'utf8');
  const half = Math.floor(bytes.length / 2);
  socket.write(
    `POST /sessions HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\nConnection: keep-alive\r\n\r\n`,
  );
  socket.write(bytes.subarray(0, half));
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('utf8');
  });
  const response = new Promise<string>((resolve) => {
    socket.on('close', () => resolve(received));
    socket.on('error', () => resolve(received));
  });
  return { finish: () => void socket.write(bytes.subarray(half)), response };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('server lifecycle (built bundle, SQLite)', () => {
  const workspace = tempWorkspace();
  afterAll(() => workspace.remove());
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
  });

  it('refuses to start on invalid settings, listing every problem', async () => {
    const result = await runToExit(SERVER_MAIN, [], {
      COGNITION_PORT: 'eighty',
      COGNITION_PERSISTENCE_BACKEND: 'mongodb',
      COGNITION_SANDBOX_BACKEND: 'vm',
      COGNITION_WORKSPACE_ROOT: workspace.dir,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration (3 problems)');
    expect(result.stderr).toContain('COGNITION_PORT');
    expect(result.stderr).toContain(
      'COGNITION_PERSISTENCE_BACKEND: expected one of sqlite, postgres, memory (got "mongodb")',
    );
    expect(result.stderr).toContain('COGNITION_SANDBOX_BACKEND: expected one of local, docker');
  });

  it('keeps idle connections open longer than a balancer does (65 s unless COGNITION_KEEP_ALIVE_TIMEOUT_SECONDS says)', async () => {
    // Node's own 5 s is shorter than HAProxy keeps idle connections to a node: a node closing one
    // as HAProxy reuses it loses the request (docs/deployment.md, "The balancer").
    server = await startServerProcess({ COGNITION_PERSISTENCE_BACKEND: 'memory' });
    expect((await fetch(`${server.url}/health`)).headers.get('keep-alive')).toBe('timeout=65');
    await server.stop('SIGKILL');
    server = await startServerProcess({
      COGNITION_PERSISTENCE_BACKEND: 'memory',
      COGNITION_KEEP_ALIVE_TIMEOUT_SECONDS: '7',
    });
    expect((await fetch(`${server.url}/health`)).headers.get('keep-alive')).toBe('timeout=7');
  });

  it('starts without an LLM provider (warning); a message then fails with PROVIDER_CONFIG_ERROR', async () => {
    server = await startServerProcess({ COGNITION_PERSISTENCE_BACKEND: 'memory' });
    const warning = server.stdout.find((line) => line.includes('No LLM provider configured'));
    expect(JSON.parse(warning ?? '{}')).toMatchObject({ level: 40 });
    const created = await http(server.url, 'POST', '/sessions', { body: {} });
    const res = await fetch(`${server.url}/sessions/${String(created.json?.['id'])}/messages`, {
      method: 'POST',
      body: JSON.stringify({ content: 'hello?' }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const frames = text.split('\n\n').filter((block) => block.includes('event: error'));
    expect(frames).toHaveLength(1);
    expect(frames[0]).toContain('"code":"PROVIDER_CONFIG_ERROR"');
    expect(frames[0]).toContain('OPENAI_API_KEY or ANTHROPIC_API_KEY');
    expect(frames[0]).toContain('COGNITION_LLM_PROVIDER');
  });

  it('a newcomer with only OPENAI_API_KEY gets openai and its default model, told in the first lines', async () => {
    server = await startServerProcess({
      COGNITION_PERSISTENCE_BACKEND: 'memory',
      OPENAI_API_KEY: 'sk-e2e-not-a-real-key',
      ANTHROPIC_API_KEY: 'sk-ant-e2e-not-a-real-key',
    });
    const lines = server.stdout.map((line) => JSON.parse(line) as Record<string, unknown>);
    const choice = lines.find((l) => String(l['msg']).startsWith('Using openai'));
    expect(choice?.['msg']).toBe(
      'Using openai (default model gpt-4o-mini; COGNITION_LLM_MODEL changes it) because OPENAI_API_KEY is set and COGNITION_LLM_PROVIDER is not. ' +
        'ANTHROPIC_API_KEY is set too: with both keys OpenAI is used, COGNITION_LLM_PROVIDER=anthropic picks Anthropic.',
    );
    const banner = lines.find((l) => String(l['msg']).includes('listening on'));
    expect(String(banner?.['msg'])).toMatch(
      /listening on http:\/\/127\.0\.0\.1:\d+ — storage: memory \(not persisted\); sandbox: local; llm: openai \(gpt-4o-mini\); scoping: off; api keys: none \(open\)$/,
    );
    expect(server.stdout.join('\n')).not.toContain('not-a-real-key');
  });

  it('logs human-readable lines on a terminal and with COGNITION_LOG_FORMAT=pretty, JSON otherwise', async () => {
    const workspace = tempWorkspace();
    try {
      const env = `COGNITION_PERSISTENCE_BACKEND=memory COGNITION_PORT=0 COGNITION_WORKSPACE_ROOT=${workspace.dir}`;
      // `script` gives the server a real terminal as stdout: `auto` then means pretty.
      const onTerminal = await readUntilListening('script', [
        '-qfec',
        `env -i PATH="$PATH" ${env} ${process.execPath} ${SERVER_MAIN}`,
        '/dev/null',
      ]);
      expect(onTerminal).toMatch(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] .*INFO.*: Cognition .* listening on http/m,
      );
      expect(onTerminal).not.toMatch(/^\{"level"/m);
      const forced = await readUntilListening('sh', [
        '-c',
        `env -i PATH="$PATH" ${env} COGNITION_LOG_FORMAT=pretty ${process.execPath} ${SERVER_MAIN}`,
      ]);
      expect(forced).toMatch(/INFO.*: Cognition .* listening on http/);
      expect(forced).not.toMatch(/^\{"level"/m);
      // Piped stdout (every other test here) stays JSON lines.
      const bad = await runToExit(SERVER_MAIN, [], { COGNITION_LOG_FORMAT: 'yaml' });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('COGNITION_LOG_FORMAT: expected one of auto, json, pretty');
    } finally {
      workspace.remove();
    }
  });

  it('refuses to start on invalid LLM settings, an unreachable Docker engine or an invalid agent file, naming them', async () => {
    const providers = await runToExit(SERVER_MAIN, [], {
      COGNITION_PERSISTENCE_BACKEND: 'memory',
      COGNITION_LLM_PROVIDER: 'openai',
    });
    expect(providers.code).toBe(1);
    expect(providers.stderr).toContain('Invalid configuration (2 problems)');
    expect(providers.stderr).toContain(
      'COGNITION_LLM_MODEL: required with COGNITION_LLM_PROVIDER=openai',
    );
    expect(providers.stderr).toContain(
      'OPENAI_API_KEY: required with COGNITION_LLM_PROVIDER=openai',
    );

    const docker = await runToExit(SERVER_MAIN, [], {
      COGNITION_PERSISTENCE_BACKEND: 'memory',
      COGNITION_SANDBOX_BACKEND: 'docker',
      DOCKER_HOST: 'unix:///tmp/cognition-e2e-no-such-docker.sock',
    });
    expect(docker.code).toBe(1);
    expect(docker.stdout).toContain(
      'Docker engine not reachable at unix:///tmp/cognition-e2e-no-such-docker.sock',
    );

    const agents = tempWorkspace();
    try {
      const file = path.join(agents.dir, '.cognition/agents/broken.md');
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, '---\nmode: sideways\n---\nPrompt\n');
      const result = await runToExit(SERVER_MAIN, [], {
        COGNITION_PERSISTENCE_BACKEND: 'memory',
        COGNITION_WORKSPACE_ROOT: agents.dir,
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('Cognition failed to start');
      expect(result.stdout).toContain(file);
    } finally {
      agents.remove();
    }
  });

  it('on SIGTERM lets an in-flight request finish, refuses new connections, exits 0; data survives the restart', async () => {
    server = await startServerProcess({
      COGNITION_WORKSPACE_ROOT: workspace.dir,
      COGNITION_SHUTDOWN_GRACE_SECONDS: '10',
    });
    const created = await http(server.url, 'POST', '/sessions', {
      body: { title: 'durable', metadata: { n: '1' } },
    });
    const id = String(created.json?.['id']);

    const slow = await startSlowRequest(
      server.url,
      JSON.stringify({ title: 'in flight during shutdown' }),
    );
    await sleep(200);
    server.child.kill('SIGTERM');
    // New connections are refused once the signal is handled (a loaded machine may take longer
    // than a fixed wait), while the request in flight keeps the process alive.
    await eventually(() =>
      fetch(`${server?.url ?? ''}/health`).then(
        () => false,
        () => true,
      ),
    );
    expect(server.child.exitCode).toBeNull();

    slow.finish();
    const raw = await slow.response;
    expect(raw).toMatch(/^HTTP\/1\.1 201 Created/);
    expect(raw).toContain('in flight during shutdown');
    expect(await server.exited).toBe(0);
    expect(server.stdout.some((line) => line.includes('Cognition stopped'))).toBe(true);

    server = await startServerProcess({ COGNITION_WORKSPACE_ROOT: workspace.dir });
    const again = await http(server.url, 'GET', `/sessions/${id}`);
    expect(again.status).toBe(200);
    // GET also says what a paused run waits for (nothing here).
    expect(again.json).toEqual({ ...created.json, pending_action: null });
    const list = await http(server.url, 'GET', '/sessions?limit=500');
    expect(JSON.stringify(list.json)).toContain('in flight during shutdown');

    // `cognition health` against this healthy server, then against nothing.
    const healthy = await runToExit(SERVER_CLI, ['health', '--url', server.url], {});
    expect(healthy.code).toBe(0);
    expect(JSON.parse(healthy.stdout)).toMatchObject({
      status: 'healthy',
      storage: { backend: 'sqlite', ok: true },
    });
    const port = new URL(server.url).port;
    expect(await server.stop()).toBe(0);
    const down = await runToExit(SERVER_CLI, ['health'], { COGNITION_PORT: port });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`Cannot reach http://127.0.0.1:${port}/health`);
  });

  it('cuts requests still running when the grace period ends (exit 1), and exits at once on a second signal', async () => {
    server = await startServerProcess({
      COGNITION_WORKSPACE_ROOT: workspace.dir,
      COGNITION_SHUTDOWN_GRACE_SECONDS: '0.5',
    });
    const stuck = await startSlowRequest(server.url, JSON.stringify({ title: 'never finished' }));
    await sleep(100);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(1);
    await stuck.response;

    server = await startServerProcess({
      COGNITION_WORKSPACE_ROOT: workspace.dir,
      COGNITION_SHUTDOWN_GRACE_SECONDS: '30',
    });
    const held = await startSlowRequest(server.url, JSON.stringify({ title: 'held' }));
    await sleep(100);
    const started = Date.now();
    server.child.kill('SIGTERM');
    await sleep(200);
    server.child.kill('SIGINT');
    expect(await server.exited).toBe(130);
    expect(Date.now() - started).toBeLessThan(5000);
    await held.response;
  });

  it('still exits on SIGTERM when nobody reads its logs any more (EPIPE on stdout)', async () => {
    server = await startServerProcess({ COGNITION_PERSISTENCE_BACKEND: 'memory' });
    // The log reader goes away (a dead supervisor): every later log write fails with EPIPE.
    server.child.stdout?.destroy();
    server.child.stderr?.destroy();
    const started = Date.now();
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('cognition migrate applies the migrations once, then finds nothing to do', async () => {
    const fresh = tempWorkspace();
    try {
      const env = { COGNITION_WORKSPACE_ROOT: fresh.dir };
      const first = await runToExit(SERVER_CLI, ['migrate'], env);
      expect(first).toMatchObject({ code: 0 });
      expect(first.stdout).toMatch(/Migrated sqlite at .*state\.db: [1-9]\d* applied/);
      const second = await runToExit(SERVER_CLI, ['migrate'], env);
      expect(second.stdout).toMatch(/: 0 applied, [1-9]\d* already applied/);
      const usage = await runToExit(SERVER_CLI, ['frobnicate'], env);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('Usage: cognition');
    } finally {
      fresh.remove();
    }
  });

  it('runs through the bin entry of apps/server/package.json', async () => {
    const child = spawn(process.execPath, [SERVER_BIN, 'help']);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(out).toContain('cognition <command>');
  });
});
