import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Issue 32: the README's curl lines printed progress meters (no `-s`) and used `jq` without
 * listing it; `npm run build` built only the server.
 */
const readme = readFileSync(path.join(__dirname, '../../../README.md'), 'utf8');
const packageJson = JSON.parse(
  readFileSync(path.join(__dirname, '../../../package.json'), 'utf8'),
) as { scripts: Record<string, string> };

describe('issue 32: the README quick start', () => {
  it('runs every curl silently (-s) and lists jq as a requirement', () => {
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
    const calls = blocks.flatMap((block) =>
      [...block.matchAll(/\bcurl( +-[A-Za-z]+)*/g)].map((m) => m[0]),
    );
    expect(calls.length).toBeGreaterThanOrEqual(8);
    expect(calls.filter((call) => !/ -[A-Za-z]*s/.test(call))).toEqual([]);
    const requirements = /Requirements:[^\n]*\n[^\n]*/.exec(readme)?.[0] ?? '';
    expect(requirements).toContain('`jq`');
  });

  it('npm run build builds the server and the dashboard', () => {
    expect(packageJson.scripts['build']).toContain('apps/server/build.mjs');
    expect(packageJson.scripts['build']).toContain('apps/admin/build.mjs');
  });
});
