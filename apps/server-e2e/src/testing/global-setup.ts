import { execFileSync } from 'node:child_process';
import { REPO_ROOT } from './paths';

/**
 * Builds the server bundle and the dashboard once per jest run (the specs spawn
 * `node dist/apps/server/main.js`, which serves dist/apps/admin under /admin).
 */
export default function globalSetup(): void {
  execFileSync(process.execPath, ['apps/server/build.mjs'], { cwd: REPO_ROOT, stdio: 'inherit' });
  execFileSync(process.execPath, ['apps/admin/build.mjs'], { cwd: REPO_ROOT, stdio: 'inherit' });
}
