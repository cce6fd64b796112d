// Builds the dashboard with Vite into dist/apps/admin (served by the server under /admin).
//   node apps/admin/build.mjs              build
//   node apps/admin/build.mjs --if-needed  build only when a source is newer than the output
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const adminDist = path.join(root, 'dist/apps/admin');
// The dashboard bundles these from source; a change in any of them means a rebuild.
const sources = [
  'apps/admin/src',
  'apps/admin/index.html',
  'apps/admin/vite.config.mts',
  'libs/client/src',
  'libs/contracts/src',
];

function newest(file) {
  const stat = statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(file).map((name) => newest(path.join(file, name))));
}

function upToDate() {
  const index = path.join(adminDist, 'index.html');
  if (!existsSync(index)) return false;
  const builtAt = statSync(index).mtimeMs;
  return sources.every((source) => newest(path.join(root, source)) <= builtAt);
}

/** Replaces the folder `target` with `built` by two renames: absent for an instant, never partial. */
function swapIn(built, target) {
  const previous = `${target}.${process.pid}.old`;
  if (existsSync(target)) renameSync(target, previous);
  renameSync(built, target);
  rmSync(previous, { recursive: true, force: true });
}

/** Builds the dashboard; with `ifNeeded`, only when a source changed since the last build. */
export async function buildAdmin({ ifNeeded = false } = {}) {
  if (ifNeeded && upToDate()) return { built: false };
  const started = Date.now();
  const { build } = await import('vite');
  // Vite and the React plugin pick React's production build and JSX runtime from NODE_ENV, which
  // a caller may have set otherwise (jest runs with `test`); the server is not running yet.
  const callerNodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  // Built beside the served folder and swapped in: a server serving /admin while this rebuilds
  // (the e2e suite's dashboard specs) never finds the folder emptied or half written.
  const staging = `${adminDist}.${process.pid}.tmp`;
  try {
    await build({
      configFile: path.join(here, 'vite.config.mts'),
      mode: 'production',
      logLevel: 'warn',
      build: { outDir: staging, emptyOutDir: true },
    });
    swapIn(staging, adminDist);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    if (callerNodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = callerNodeEnv;
  }
  process.stdout.write(
    `admin built in ${Date.now() - started} ms -> ${path.relative(root, adminDist)}\n`,
  );
  return { built: true };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { built } = await buildAdmin({ ifNeeded: process.argv.includes('--if-needed') });
  if (!built) process.stdout.write('admin build is up to date\n');
}
