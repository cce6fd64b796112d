import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Issue 31: `npm test` left changed screenshots, an empty `dev.db` and ~30 temp directories.
 * check-clean.mjs (pretest `--snapshot`, posttest compare) names what a run left behind, and
 * leaves a developer's own uncommitted work alone. Driven here on a scratch git repository with
 * its own temp directory (TMPDIR), so the machine's real /tmp and checkout play no part.
 */
const SCRIPT = path.join(__dirname, 'check-clean.mjs');

let base: string;
let repo: string;
let temp: string;

function sh(cwd: string, command: string, args: string[]): void {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${result.stderr}`);
}

function check(snapshot = false) {
  const result = spawnSync(process.execPath, [SCRIPT, ...(snapshot ? ['--snapshot'] : [])], {
    cwd: repo,
    encoding: 'utf8',
    env: {
      PATH: process.env['PATH'] ?? '',
      TMPDIR: temp,
      COGNITION_CLEAN_SNAPSHOT: path.join(base, 'snapshot.json'),
    },
  });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

beforeEach(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'cognition-check-clean-'));
  repo = path.join(base, 'repo');
  temp = path.join(base, 'tmp');
  mkdirSync(repo);
  mkdirSync(temp);
  sh(repo, 'git', ['init', '-q']);
  writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n*.db\ndist/\n');
  writeFileSync(path.join(repo, 'shot.png'), 'v1');
  writeFileSync(path.join(repo, 'mine.ts'), 'committed');
  sh(repo, 'git', ['add', '.']);
  sh(repo, 'git', [
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@example.com',
    'commit',
    '-q',
    '-m',
    'init',
  ]);
});

afterEach(() => rmSync(base, { recursive: true, force: true }));

test('a run that leaves nothing passes, even over uncommitted work and build outputs', () => {
  writeFileSync(path.join(repo, 'mine.ts'), 'work in progress');
  writeFileSync(path.join(repo, 'notes.txt'), 'untracked before the run');
  writeFileSync(path.join(temp, 'other-program-file'), 'not ours');
  expect(check(true).status).toBe(0);
  mkdirSync(path.join(repo, 'dist'));
  writeFileSync(path.join(repo, 'dist', 'main.js'), 'built');
  mkdirSync(path.join(repo, 'node_modules', '.cache'), { recursive: true });
  writeFileSync(path.join(temp, 'another-program-file'), 'not ours either');
  const result = check();
  expect(result.out).toContain('as it found them');
  expect(result.status).toBe(0);
});

test('names a rewritten tracked file, new untracked and ignored files, and new temp entries', () => {
  writeFileSync(path.join(repo, 'mine.ts'), 'work in progress');
  expect(check(true).status).toBe(0);
  writeFileSync(path.join(repo, 'shot.png'), 'v2');
  writeFileSync(path.join(repo, 'mine.ts'), 'rewritten by a test');
  writeFileSync(path.join(repo, 'dev.db'), '');
  writeFileSync(path.join(repo, 'left.json'), '{}');
  mkdirSync(path.join(temp, 'cognition-app-abc123'));
  const result = check();
  expect(result.status).toBe(1);
  expect(result.out).toContain('shot.png: changed (M)');
  expect(result.out).toContain('mine.ts: rewritten by the run');
  expect(result.out).toContain('dev.db: new ignored file');
  expect(result.out).toContain('left.json: new untracked file');
  expect(result.out).toContain(`${path.join(temp, 'cognition-app-abc123')}: left in the temp`);
});

test('COGNITION_CHECK_CLEAN=0 skips the check (a second suite running at the same time)', () => {
  const result = spawnSync(process.execPath, [SCRIPT], {
    cwd: repo,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', COGNITION_CHECK_CLEAN: '0' },
  });
  expect(result.status).toBe(0);
  expect(result.stdout).toContain('skipped');
});
