// Packs @cognition/client as the npm tarball users install (`npm run build` runs it):
//   dist/packages/cognition-client-<version>.tgz
// The package is versioned with the server: its version must equal apps/server/package.json's
// (the build stops otherwise, so a release cannot ship a client of another version). The files
// are built into a staging folder of their own, not libs/client/dist, so a pack never races a
// build another process runs there.
//
//   node libs/client/pack.mjs                  pack into dist/packages
//   node libs/client/pack.mjs --out-dir DIR    pack into DIR
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildClient } from './build.mjs';

const require = createRequire(import.meta.url);
const run = promisify(execFile);

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
export const defaultPackDir = path.join(repoRoot, 'dist/packages');

/**
 * Builds and packs the client into `outDir`; returns the tarball's path, version and the files
 * it holds (paths inside the package).
 */
export async function packClient({ outDir = defaultPackDir } = {}) {
  const pkg = require('./package.json');
  // Read as a file, not required: a require would make the client library depend on the server
  // app in the project graph (client -> server -> admin -> client, a cycle ESLint refuses).
  const serverVersion = JSON.parse(
    readFileSync(path.join(here, '../../apps/server/package.json'), 'utf8'),
  ).version;
  if (pkg.version !== serverVersion) {
    throw new Error(
      `@cognition/client is versioned with the server: libs/client/package.json says ` +
        `${pkg.version}, apps/server/package.json ${serverVersion}. Set both to the same version.`,
    );
  }
  await mkdir(outDir, { recursive: true });
  const stage = await mkdtemp(path.join(outDir, '.stage-'));
  try {
    await buildClient({ outDir: path.join(stage, 'dist') });
    // The package as published: its manifest without the workspace-only build script.
    const { scripts: _scripts, ...manifest } = pkg;
    await writeFile(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    await copyFile(path.join(here, 'README.md'), path.join(stage, 'README.md'));
    const { stdout } = await run(
      'npm',
      ['pack', '--json', '--ignore-scripts', '--pack-destination', outDir],
      { cwd: stage, maxBuffer: 16 << 20 },
    );
    const [packed] = JSON.parse(stdout);
    return {
      tarball: path.join(outDir, packed.filename),
      version: pkg.version,
      files: packed.files.map((file) => file.path).sort(),
    };
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flag = process.argv.indexOf('--out-dir');
  const outDir = flag > 0 ? path.resolve(process.argv[flag + 1] ?? '') : defaultPackDir;
  const { tarball, version } = await packClient({ outDir });
  process.stdout.write(
    `@cognition/client ${version} packed -> ${path.relative(process.cwd(), tarball)}\n`,
  );
}
