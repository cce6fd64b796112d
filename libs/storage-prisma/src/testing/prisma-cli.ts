import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { DatabaseProvider } from '../db/migrate';

// The repository's Prisma CLI, for the specs that compare migrations with the model.

export const REPO_ROOT = resolve(__dirname, '../../../..');

export const runFile = promisify(execFile);

/**
 * Runs the Prisma CLI of the repository (offline-capable commands only; see ENVIRONMENT.md), in
 * `cwd` (default: the repository root).
 */
export async function prismaCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  cwd = REPO_ROOT,
): Promise<string> {
  const { stdout } = await runFile(
    process.execPath,
    [join(REPO_ROOT, 'node_modules/prisma/build/index.js'), ...args],
    {
      cwd,
      // The CLI loads prisma.config.ts through jiti, whose transpile cache would otherwise be
      // <os temp dir>/jiti (no node_modules beside prisma/): a test run leaves nothing there.
      env: { ...process.env, JITI_FS_CACHE: 'false', ...env },
    },
  );
  return stdout;
}

/** The SQL Prisma's engine writes to create the current model from nothing (works offline). */
export function modelScript(provider: DatabaseProvider): Promise<string> {
  const folder = provider === 'sqlite' ? 'sqlite' : 'postgres';
  return prismaCli([
    'migrate',
    'diff',
    '--config',
    `prisma/${folder}/prisma.config.ts`,
    '--from-empty',
    '--to-schema-datamodel',
    `prisma/${folder}/schema.prisma`,
    '--script',
  ]);
}
