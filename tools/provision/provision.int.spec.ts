import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The provisioning contract (README.md): an ensure script run twice in a row does nothing the
 * second time; one pointed at an unusable service fails at once with a message naming the
 * service, what was tried and how to provide it.
 */
const here = __dirname;
const scripts = {
  postgres: [process.execPath, path.join(here, 'ensure-postgres.mjs')],
  docker: ['bash', path.join(here, 'ensure-docker.sh')],
  chromium: ['bash', path.join(here, 'ensure-chromium.sh')],
  redis: ['bash', path.join(here, 'ensure-redis.sh')],
  haproxy: ['bash', path.join(here, 'ensure-haproxy.sh')],
} as const;

function run(command: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const [program = '', ...args] = command;
  const result = spawnSync(program, args, {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 110_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe.each(Object.entries(scripts))('ensure-%s', (service, command) => {
  test('twice in a row: the second run finds the service and changes nothing', () => {
    const first = run(command);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    const second = run(command);
    expect(second.status).toBe(0);
    expect(second.stdout).toMatch(new RegExp(`^${service}: .*already (running|installed)`, 'm'));
    expect(second.stdout).not.toMatch(/started|installing|building/);
  });
});

describe('an unusable setting fails at once with the service message', () => {
  test('postgres: COGNITION_TEST_POSTGRES_URL that does not answer', () => {
    const result = run(scripts.postgres, {
      COGNITION_TEST_POSTGRES_URL: 'postgresql://postgres@127.0.0.1:1/postgres',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^postgres: UNAVAILABLE — COGNITION_TEST_POSTGRES_URL=/);
    expect(result.stderr).toMatch(/tried: .*\n {2}to provide it: /);
  });

  test('postgres: a password in the URL is never printed', () => {
    const result = run(scripts.postgres, {
      COGNITION_TEST_POSTGRES_URL: 'postgresql://someone:hunter2@127.0.0.1:1/postgres',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('someone:***@');
    expect(result.stderr).not.toContain('hunter2');
  });

  test('docker: DOCKER_HOST that does not answer (no local daemon is started instead)', () => {
    const result = run(scripts.docker, { DOCKER_HOST: 'tcp://127.0.0.1:1' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^docker: UNAVAILABLE — DOCKER_HOST=tcp:\/\/127\.0\.0\.1:1 /);
    expect(result.stderr).toMatch(/tried: .*\n {2}to provide it: /);
  });

  test('chromium: COGNITION_TEST_CHROMIUM that does not run', () => {
    const result = run(scripts.chromium, { COGNITION_TEST_CHROMIUM: '/nonexistent/chromium' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^chromium: UNAVAILABLE — COGNITION_TEST_CHROMIUM=\/nonexistent\/chromium /,
    );
    expect(result.stderr).toMatch(/tried: .*\n {2}to provide it: /);
  });

  test('redis: COGNITION_TEST_REDIS_URL that does not answer (none is started instead)', () => {
    const result = run(scripts.redis, {
      COGNITION_TEST_REDIS_URL: 'redis://someone:hunter2@127.0.0.1:1',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^redis: UNAVAILABLE — COGNITION_TEST_REDIS_URL /);
    expect(result.stderr).toMatch(/tried: .*\n {2}to provide it: /);
    expect(result.stderr).not.toContain('hunter2');
  });

  test('haproxy: COGNITION_TEST_HAPROXY that does not run', () => {
    const result = run(scripts.haproxy, { COGNITION_TEST_HAPROXY: '/nonexistent/haproxy' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^haproxy: UNAVAILABLE — COGNITION_TEST_HAPROXY=\/nonexistent\/haproxy /,
    );
  });

  test('npm test stops before the suite, naming every missing service', () => {
    const result = run([process.execPath, path.join(here, 'provision.mjs')], {
      COGNITION_TEST_POSTGRES_URL: 'postgresql://postgres@127.0.0.1:1/postgres',
      DOCKER_HOST: 'tcp://127.0.0.1:1',
      COGNITION_TEST_CHROMIUM: '/nonexistent/chromium',
      COGNITION_TEST_REDIS_URL: 'redis://127.0.0.1:1',
      COGNITION_TEST_HAPROXY: '/nonexistent/haproxy',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'the test suite needs postgres, docker, chromium, redis, haproxy',
    );
  });
});

// Starting a server where none runs needs a machine where none runs: a fresh network namespace
// (its own loopback, so 127.0.0.1:5432 is free) gives one, and that needs root.
const isRoot = process.getuid?.() === 0;
(isRoot ? describe : describe.skip)(
  'ensure-postgres where nothing runs (network namespace, root)',
  () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cognition-provision-'));
    afterAll(() => {
      run([...scripts.postgres, '--stop'], { COGNITION_TEST_POSTGRES_DIR: dir });
      rmSync(dir, { recursive: true, force: true });
    });

    test('starts the embedded server, finds it on the second run, stops it', () => {
      const ensure = `${process.execPath} ${scripts.postgres[1]}`;
      const result = run(
        [
          'unshare',
          '-n',
          'sh',
          '-c',
          `ip link set lo up && ${ensure} && ${ensure} && ${ensure} --stop`,
        ],
        { COGNITION_TEST_POSTGRES_DIR: dir },
      );
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      const lines = result.stdout.trim().split('\n');
      expect(lines[0]).toMatch(
        /^postgres: started embedded PostgreSQL \d+\.\d+ on 127\.0\.0\.1:5432/,
      );
      expect(lines[1]).toMatch(/^postgres: ready at .* already running/);
      expect(lines[2]).toMatch(/^postgres: stopped the embedded server/);
    });
  },
);
