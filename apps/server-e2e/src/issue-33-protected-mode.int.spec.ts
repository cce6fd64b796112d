import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { http } from './testing/http';
import { SERVER_MAIN } from './testing/paths';
import { trackOutput } from './testing/process-logs';
import { rawHttp } from './testing/raw-http';
import type { ServerProcess } from './testing/server-process';
import { startServerProcess, tempWorkspace } from './testing/server-process';

/**
 * Issue 33, protected mode, on the BUILT server: an open server (no API keys) refuses a
 * non-loopback COGNITION_HOST, the local sandbox refuses one even with keys, each with one
 * message naming what was refused, why and the setting that allows it — before the logger, the
 * database or the port exist. The opt-ins start it, with a warning at every start.
 */
const run = promisify(execFile);
const KEY = 'protected-mode-key-0123456789';

async function runToExit(
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [SERVER_MAIN], {
      env: { PATH: process.env['PATH'] ?? '', COGNITION_PORT: '0', ...env },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** The log lines (JSON) at warn level that name `setting`. */
function warningsFor(server: ServerProcess, setting: string): Record<string, unknown>[] {
  return server.stdout
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    })
    .filter((line) => line['level'] === 40 && line['setting'] === setting);
}

describe('protected mode (issue 33, built server)', () => {
  const workspace = tempWorkspace();
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
  });
  afterAll(() => workspace.remove());

  /** Nothing was started: no log line, no state directory (so no database file). */
  function expectNothingStarted(result: { stdout: string }, dir: string) {
    expect(result.stdout).toBe('');
    expect(existsSync(path.join(dir, '.cognition'))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  }

  it('refuses 0.0.0.0 with no API keys: exit 1, one message (what, why, the setting), nothing started', async () => {
    const dir = tempWorkspace();
    try {
      const result = trackOutput(
        'refused',
        await runToExit({
          COGNITION_HOST: '0.0.0.0',
          COGNITION_WORKSPACE_ROOT: dir.dir,
          COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK: 'true',
        }),
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('Invalid configuration (1 problem)');
      expect(result.stderr).toContain(
        'COGNITION_HOST: refused to listen on 0.0.0.0 with no API keys configured.',
      );
      expect(result.stderr).toContain('not a loopback address');
      expect(result.stderr).toContain('COGNITION_ALLOW_UNAUTHENTICATED_NETWORK=true');
      expectNothingStarted(result, dir.dir);

      const v6 = trackOutput(
        'refused ::',
        await runToExit({
          COGNITION_HOST: '::',
          COGNITION_WORKSPACE_ROOT: dir.dir,
          COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK: 'true',
        }),
      );
      expect(v6.code).toBe(1);
      expect(v6.stderr).toContain('refused to listen on :: with no API keys');
      expectNothingStarted(v6, dir.dir);
    } finally {
      dir.remove();
    }
  });

  it('refuses the local sandbox on a non-loopback address even with API keys, naming its opt-in', async () => {
    const dir = tempWorkspace();
    try {
      const result = trackOutput(
        'refused sandbox',
        await runToExit({
          COGNITION_HOST: '0.0.0.0',
          COGNITION_API_KEYS: KEY,
          COGNITION_WORKSPACE_ROOT: dir.dir,
        }),
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('Invalid configuration (1 problem)');
      expect(result.stderr).toContain(
        'COGNITION_SANDBOX_BACKEND: refused the local sandbox with COGNITION_HOST=0.0.0.0.',
      );
      expect(result.stderr).toContain('no isolation');
      expect(result.stderr).toContain('COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK=true');
      expect(result.stderr).not.toContain(KEY);
      expectNothingStarted(result, dir.dir);

      // Neither key nor opt-in: both refusals, in one message.
      const both = trackOutput(
        'refused both',
        await runToExit({ COGNITION_HOST: '0.0.0.0', COGNITION_WORKSPACE_ROOT: dir.dir }),
      );
      expect(both.code).toBe(1);
      expect(both.stderr).toContain('Invalid configuration (2 problems)');
      expectNothingStarted(both, dir.dir);
    } finally {
      dir.remove();
    }
  });

  it('starts on 0.0.0.0 with the opt-ins, warning at every start; the Host check still holds', async () => {
    const env = {
      COGNITION_HOST: '0.0.0.0',
      COGNITION_WORKSPACE_ROOT: workspace.dir,
      COGNITION_ALLOW_UNAUTHENTICATED_NETWORK: 'true',
      COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK: 'true',
    };
    for (const start of [1, 2]) {
      server = trackOutput(`opt-in start ${start}`, await startServerProcess(env));
      const url = server.url.replace('0.0.0.0', '127.0.0.1');
      expect(server.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
      const [open] = warningsFor(server, 'COGNITION_ALLOW_UNAUTHENTICATED_NETWORK');
      expect(String(open?.['msg'])).toContain('with no API keys');
      const [sandbox] = warningsFor(server, 'COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK');
      expect(String(sandbox?.['msg'])).toContain('no isolation');
      // Said before the server listens.
      const listening = server.stdout.findIndex((line) => line.includes('listening on'));
      const warned = server.stdout.findIndex((line) => line.includes('"level":40'));
      expect(warned).toBeGreaterThanOrEqual(0);
      expect(warned).toBeLessThan(listening);

      expect((await http(url, 'POST', '/sessions', { body: {} })).status).toBe(201);
      const forged = await rawHttp(url, 'GET', '/sessions', { Host: 'attacker.example' });
      expect(forged.status).toBe(403);
      expect(await server.stop()).toBe(0);
      server = undefined;
    }
  });

  it('starts on 0.0.0.0 with API keys (and the sandbox opt-in): no open-server warning, keys required', async () => {
    server = trackOutput(
      'keyed',
      await startServerProcess({
        COGNITION_HOST: '0.0.0.0',
        COGNITION_PERSISTENCE_BACKEND: 'memory',
        COGNITION_API_KEYS: KEY,
        COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK: 'true',
      }),
    );
    const url = server.url.replace('0.0.0.0', '127.0.0.1');
    expect(warningsFor(server, 'COGNITION_ALLOW_UNAUTHENTICATED_NETWORK')).toEqual([]);
    expect(warningsFor(server, 'COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK')).toHaveLength(1);
    expect((await http(url, 'GET', '/sessions')).status).toBe(401);
    const keyed = await http(url, 'GET', '/sessions', {
      headers: { Authorization: `Bearer ${KEY}` },
    });
    expect(keyed.status).toBe(200);
  });

  it('starts on loopback exactly as before: no opt-in, no warning about the network', async () => {
    server = trackOutput(
      'loopback',
      await startServerProcess({ COGNITION_PERSISTENCE_BACKEND: 'memory' }),
    );
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const setting of [
      'COGNITION_ALLOW_UNAUTHENTICATED_NETWORK',
      'COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK',
    ]) {
      expect(warningsFor(server, setting)).toEqual([]);
    }
  });
});
