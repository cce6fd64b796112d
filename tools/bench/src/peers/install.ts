import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The peers' own package (relative to the repository root): the LangGraph.js API server, Mastra
 * and their clients, with a committed lock file. They are not dependencies of the repository
 * (a user's `npm install` would install benchmark contenders, with Mastra's Node ≥ 22.13 engine
 * warnings on Node 20); the bench installs them here on first use.
 */
export const PEERS_DIR = 'tools/bench/peers';

/**
 * Written into the peers' node_modules after a successful install: the digest of the
 * package.json and package-lock.json it installed. npm writes node_modules/.package-lock.json as
 * it goes, so that file alone would not tell a finished install from an interrupted one.
 */
const STAMP = path.join('node_modules', '.cognition-bench-peers.sha256');

export function peersDir(repoRoot: string): string {
  return path.join(repoRoot, PEERS_DIR);
}

function manifestDigest(dir: string): string {
  const hash = createHash('sha256');
  for (const file of ['package.json', 'package-lock.json']) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(path.join(dir, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Why the peers need an install, or undefined when the installed tree matches the lock file. */
export function peersInstallReason(repoRoot: string): string | undefined {
  const dir = peersDir(repoRoot);
  if (!existsSync(path.join(dir, 'node_modules'))) return 'first use: not installed yet';
  const stampPath = path.join(dir, STAMP);
  if (!existsSync(stampPath)) return 'the last install did not finish';
  if (readFileSync(stampPath, 'utf8').trim() !== manifestDigest(dir)) {
    return 'its package.json or package-lock.json changed since the last install';
  }
  return undefined;
}

/** Records that the installed tree matches the current package.json and lock file. */
export function markPeersInstalled(repoRoot: string): void {
  const dir = peersDir(repoRoot);
  writeFileSync(path.join(dir, STAMP), `${manifestDigest(dir)}\n`);
}

function npmInstall(dir: string): Promise<void> {
  // --loglevel=error: the engine warnings (Mastra and some of its dependencies declare Node ≥ 22;
  // they run on 20) and peer-dependency notes would bury the bench's own log; errors still show.
  // npm's output goes to stderr, where the bench logs (stdout carries the result table).
  // --prefer-offline: the lock file pins every version (and its integrity), so what npm's cache
  // holds is used without asking the registry again; the registry serves what it lacks.
  const args = [
    'install',
    '--prefix',
    dir,
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('npm', args, {
      cwd: dir,
      stdio: ['ignore', 2, 2],
      shell: process.platform === 'win32',
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else {
        reject(
          new Error(
            `npm ${args.join(' ')} failed (${signal ?? `exit ${code}`}): the benchmark peers ` +
              `install from the npm registry; see npm's output above`,
          ),
        );
      }
    });
  });
}

const installs = new Map<string, Promise<void>>();

/**
 * Installs the peers' package (`npm install --prefix tools/bench/peers`) unless the installed
 * tree already matches its package.json and lock file; says on one line that it installs and
 * why. Idempotent, and one install at a time per process (concurrent callers share it). Not
 * guarded against a second process installing at the same moment.
 */
export function ensurePeersInstalled(repoRoot: string, log: (line: string) => void): Promise<void> {
  const dir = peersDir(repoRoot);
  const pending = installs.get(dir);
  if (pending) return pending;
  const reason = peersInstallReason(repoRoot);
  if (reason === undefined) return Promise.resolve();
  const install = (async () => {
    log(`installing the benchmark peers into ${PEERS_DIR} (${reason}) …`);
    const started = Date.now();
    await npmInstall(dir);
    // After the install: npm may have normalised the lock file, and the stamp is what was installed.
    markPeersInstalled(repoRoot);
    log(`benchmark peers installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  })().finally(() => installs.delete(dir));
  installs.set(dir, install);
  return install;
}

/**
 * `require` resolving from the peers' package, for their clients, which the benchmarks drive from
 * this process. (The peers' servers are `.mjs` files inside that folder instead: ES modules
 * resolve bare imports from the importing file's location and ignore NODE_PATH.) Call
 * `ensurePeersInstalled` first.
 */
export function requirePeerPackage<T>(repoRoot: string, name: string): T {
  return createRequire(path.join(peersDir(repoRoot), 'package.json'))(name) as T;
}
