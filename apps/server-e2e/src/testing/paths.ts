import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../../../..');
export const SERVER_MAIN = path.join(REPO_ROOT, 'dist/apps/server/main.js');
export const SERVER_CLI = path.join(REPO_ROOT, 'dist/apps/server/cli.js');
export const SERVER_BIN = path.join(REPO_ROOT, 'apps/server/bin/cognition.cjs');
