// `npm run bench -- [options]`: bundles tools/bench/src/main.ts with esbuild (the @cognition/*
// path aliases of tsconfig.base.json resolve to library sources and are bundled; npm packages
// stay external and load from node_modules) into dist/tools/bench, then runs the bundle in a
// fresh Node process with the same arguments and exits with its code.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// `npm run bench -- ab-turn …` runs src/ab-turn.ts (A/B of server builds) instead of the suite.
const entry = process.argv[2] === 'ab-turn' ? 'ab-turn' : 'main';
const forwarded = entry === 'main' ? process.argv.slice(2) : process.argv.slice(3);
const outfile = path.join(root, `dist/tools/bench/${entry}.js`);

const externalPackages = {
  name: 'external-npm-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@cognition/') || path.isAbsolute(args.path)) return undefined;
      return { path: args.path, external: true };
    });
  },
};

try {
  await build({
    absWorkingDir: root,
    entryPoints: [path.join(root, `tools/bench/src/${entry}.ts`)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: true,
    tsconfig: path.join(root, 'tools/bench/tsconfig.json'),
    plugins: [externalPackages],
    logLevel: 'warning',
  });
} catch {
  // esbuild has printed the errors.
  process.exit(1);
}

const result = spawnSync(process.execPath, ['--enable-source-maps', outfile, ...forwarded], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
