import { execFile } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './testing/paths';

/**
 * Issue 32: `npm run build` built only the server, so a "built" checkout still wrote
 * dist/apps/admin on its first start. It builds both now (and packs the client's npm tarball),
 * and the start path (`npm start`'s `--if-needed` builds) then has nothing left to build.
 */

const run = promisify(execFile);

describe('issue 32: npm run build', () => {
  it('builds the server and the dashboard; the start path then builds nothing', async () => {
    // Other specs start servers from this bundle and load the dashboard while this rebuilds:
    // the build replaces each file (and the dashboard's folder) whole, by a rename, so their
    // inodes change, rather than rewriting them in place; nothing temporary is left beside.
    const dist = path.join(REPO_ROOT, 'dist/apps');
    const inodes = async () => ({
      main: (await stat(path.join(dist, 'server/main.js'))).ino,
      admin: (await stat(path.join(dist, 'admin'))).ino,
    });
    const before = await inodes();
    const build = await run('npm', ['run', 'build'], { cwd: REPO_ROOT, maxBuffer: 16 << 20 });
    const after = await inodes();
    expect(after.main).not.toBe(before.main);
    expect(after.admin).not.toBe(before.admin);
    const leftovers = async (folder: string) =>
      (await readdir(folder)).filter((name) => /\.(tmp|old)$/.test(name));
    expect([...(await leftovers(dist)), ...(await leftovers(path.join(dist, 'server')))]).toEqual(
      [],
    );
    expect(build.stdout).toMatch(/server built in \d+ ms -> dist\/apps\/server/);
    expect(build.stdout).toMatch(/admin built in \d+ ms -> dist\/apps\/admin/);
    // The client's npm tarball, named with the server's version (issue-32-examples installs it).
    const { version } = JSON.parse(
      await readFile(path.join(REPO_ROOT, 'apps/server/package.json'), 'utf8'),
    ) as { version: string };
    const tarball = `dist/packages/cognition-client-${version}.tgz`;
    expect(build.stdout).toContain(`@cognition/client ${version} packed -> ${tarball}`);
    expect((await stat(path.join(REPO_ROOT, tarball))).size).toBeGreaterThan(0);
    // What apps/server/start.mjs runs before serving, asked whether it would build.
    const probe = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const { buildServer } = await import('./apps/server/build.mjs');" +
          "const { buildAdmin } = await import('./apps/admin/build.mjs');" +
          'const server = await buildServer({ ifNeeded: true });' +
          'const admin = await buildAdmin({ ifNeeded: true });' +
          'console.log(JSON.stringify({ server, admin }));',
      ],
      { cwd: REPO_ROOT },
    );
    expect(JSON.parse(probe.stdout.trim().split('\n').pop() ?? '{}')).toEqual({
      server: { built: false },
      admin: { built: false },
    });
  }, 180_000); // three builds (server, dashboard, client) on a shared machine
});
