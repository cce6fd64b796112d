// Builds the server: an esbuild bundle of src/main.ts (and the `cognition` CLI, src/cli.ts) into
// dist/apps/server. Node platform, CommonJS; npm packages stay external (resolved from
// node_modules at runtime) while the @cognition/* libraries (tsconfig path aliases) and the
// Prisma generated clients under libs/storage-prisma/src/generated are bundled.
//
//   node apps/server/build.mjs              build
//   node apps/server/build.mjs --if-needed  build only when a bundled input is newer than the
//                                           output (inputs are recorded in meta.json)
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const outdir = path.join(root, 'dist/apps/server');
const metaFile = path.join(outdir, 'meta.json');
const entries = { main: 'apps/server/src/main.ts', cli: 'apps/server/src/cli.ts' };

function upToDate() {
  if (!existsSync(metaFile)) return false;
  const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
  const outputs = Object.keys(entries).map((name) => path.join(outdir, `${name}.js`));
  if (!outputs.every((file) => existsSync(file))) return false;
  const builtAt = Math.min(...outputs.map((file) => statSync(file).mtimeMs));
  return meta.inputs.every((input) => {
    const file = path.join(root, input);
    return existsSync(file) && statSync(file).mtimeMs <= builtAt;
  });
}

// Bare imports are npm packages (external) unless they name one of our libraries, which the
// tsconfig paths resolve to sources that must be bundled.
const externalPackages = {
  name: 'external-npm-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@cognition/')) return undefined;
      if (path.isAbsolute(args.path)) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/** Builds the bundle; with `ifNeeded`, only when an input changed since the last build. */
export async function buildServer({ ifNeeded = false } = {}) {
  if (ifNeeded && upToDate()) return { built: false };
  const started = Date.now();
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: entries,
    outdir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: true,
    tsconfig: path.join(root, 'apps/server/tsconfig.json'),
    plugins: [externalPackages],
    metafile: true,
    logLevel: 'warning',
    // Written below, each file whole: a server starting while this rebuilds (the e2e suite
    // spawns them from this bundle) reads the old file or the new one, never half of one.
    write: false,
  });
  for (const file of result.outputFiles) writeWhole(file.path, file.contents);
  writeWhole(metaFile, JSON.stringify({ inputs: Object.keys(result.metafile.inputs) }));
  process.stdout.write(
    `server built in ${Date.now() - started} ms -> ${path.relative(root, outdir)}\n`,
  );
  return { built: true };
}

/** Writes `file` under a temporary name, then renames it into place (atomic on one file system). */
function writeWhole(file, contents) {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
}

export const serverMain = path.join(outdir, 'main.js');

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { built } = await buildServer({ ifNeeded: process.argv.includes('--if-needed') }).catch(
    () => {
      // esbuild has already printed the errors.
      process.exit(1);
    },
  );
  if (!built) process.stdout.write('server build is up to date\n');
}
