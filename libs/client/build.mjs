// Builds @cognition/client as a standalone package into libs/client/dist (or another folder):
//   index.js (CommonJS) + index.mjs (ESM): esbuild bundles of src, npm dependencies external;
//   index.d.ts: one declaration file carrying the router types (contracts and api types
//   inlined), so consumers need no server source. pack.mjs turns a build into the tarball.
//
//   node libs/client/build.mjs    build into libs/client/dist
import { build } from 'esbuild';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';
import { createRequire } from 'node:module';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

const root = path.dirname(fileURLToPath(import.meta.url));
const entry = path.join(root, 'src/index.ts');
const pkg = require('./package.json');
const external = Object.keys(pkg.dependencies ?? {});

/** Builds the package's files into `outDir` (emptied first); returns the package version. */
export async function buildClient({ outDir = path.join(root, 'dist') } = {}) {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });

  const common = {
    entryPoints: [entry],
    bundle: true,
    external,
    platform: 'neutral',
    target: 'es2022',
    sourcemap: true,
    tsconfig: path.join(root, 'tsconfig.json'),
    logLevel: 'warning',
  };
  await build({ ...common, format: 'cjs', outfile: path.join(outDir, 'index.js') });
  await build({ ...common, format: 'esm', outfile: path.join(outDir, 'index.mjs') });

  const bundle = await rollup({
    input: entry,
    // Packages the client declares stay imports; @cognition/* sources (path aliases) are inlined.
    external: (id) => external.some((dep) => id === dep || id.startsWith(`${dep}/`)),
    plugins: [dts({ tsconfig: path.join(root, 'tsconfig.build.json') })],
    onwarn: (warning) => {
      throw new Error(`declaration bundle: ${warning.message}`);
    },
  });
  const { output } = await bundle.generate({ format: 'es' });
  await bundle.close();
  const dtsSource = output[0].code;
  await writeFile(path.join(outDir, 'index.d.ts'), dtsSource);

  // The package must not import anything it does not declare as a dependency.
  const imported = [...dtsSource.matchAll(/(?:from |import\()['"]([^'"]+)['"]/g)].map(
    (match) => match[1],
  );
  const undeclared = imported.filter(
    (specifier) => !external.some((dep) => specifier === dep || specifier.startsWith(`${dep}/`)),
  );
  if (undeclared.length > 0) {
    throw new Error(
      `index.d.ts imports undeclared packages: ${[...new Set(undeclared)].join(', ')}`,
    );
  }
  return pkg.version;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = path.join(root, 'dist');
  await buildClient({ outDir });
  process.stdout.write(
    `@cognition/client ${pkg.version} built into ${path.relative(process.cwd(), outDir)}\n`,
  );
}
