import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO_ROOT } from './paths';

const run = promisify(execFile);

/**
 * Builds the server bundle and the dashboard once per jest run (the specs spawn
 * `node dist/apps/server/main.js`, which serves dist/apps/admin under /admin). Both at once:
 * they write different folders, and no spec starts before both are done.
 */
export default async function globalSetup(): Promise<void> {
  const outputs = await Promise.all(
    ['apps/server/build.mjs', 'apps/admin/build.mjs'].map((script) =>
      run(process.execPath, [script], { cwd: REPO_ROOT, maxBuffer: 16 << 20 }),
    ),
  );
  for (const { stdout, stderr } of outputs) process.stdout.write(stdout + stderr);
}
