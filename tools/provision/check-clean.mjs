#!/usr/bin/env node
// "The suite leaves the checkout as it found it" (issue 31), checked around `npm test`:
//   check-clean.mjs --snapshot   (end of npm's `pretest`) records the state
//   check-clean.mjs              (npm's `posttest`) compares, prints what the run left, exits 1
// A snapshot, not "the tree must be clean": a developer's own uncommitted work is no failure, but
// the suite rewriting one of those files is (each dirty file's content hash is recorded too).
//
// Checked:
// - the checkout (`git status --porcelain --ignored`): a tracked file changed, a new untracked
//   file, or a new ignored one outside build outputs and caches (IGNORED_OK) — `*.db` is ignored,
//   yet an empty `dev.db` in the root was exactly what the suite used to leave;
// - the OS temp dir: new entries owned by this user whose names are the project's (every temp
//   path the code and its tests create starts with `cognition-`). Other programs use the temp dir
//   too, so nothing else is judged; a second suite run by the same user at the same time would
//   show its own entries in flight: COGNITION_CHECK_CLEAN=0 skips the check then.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Ignored paths a run may create: dependencies, build outputs, caches. */
const IGNORED_OK = [
  /(^|\/)node_modules\//,
  /(^|\/)dist\//, // the server's and dashboard's bundles, the client's tarball (dist/packages), libs/client/dist
  /^\.nx\//,
  /^coverage\//,
  /^libs\/storage-prisma\/src\/generated\//,
  /\.tsbuildinfo$/,
];
/** The project's temp entries (mkdtemp prefixes, provisioning's pid and data paths). */
const TEMP_PATTERN = /^cognition-/;

function git(root, args) {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

function repoRoot() {
  try {
    return git(process.cwd(), ['rev-parse', '--show-toplevel']).trim();
  } catch {
    return null; // not a git checkout (a tarball): only the temp dir is checked
  }
}

function hashOf(file) {
  try {
    const stat = lstatSync(file);
    if (!stat.isFile()) return stat.isDirectory() ? 'dir' : 'other';
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return 'missing';
  }
}

/** `XY path` entries of the porcelain status (renames keep their new path), with content hashes. */
function checkoutState(root) {
  const entries = {};
  const fields = git(root, ['status', '--porcelain=v1', '-z', '--ignored', '--untracked-files=all'])
    .split('\0')
    .filter(Boolean);
  for (let i = 0; i < fields.length; i += 1) {
    const field = fields[i];
    const code = field.slice(0, 2);
    const file = field.slice(3);
    if (code[0] === 'R' || code[0] === 'C') i += 1; // the source path follows
    if (code === '!!' && IGNORED_OK.some((pattern) => pattern.test(file))) continue;
    entries[file] = {
      code,
      hash: code === '!!' && file.endsWith('/') ? 'dir' : hashOf(path.join(root, file)),
    };
  }
  return entries;
}

function tempState(dir) {
  const uid = process.getuid?.();
  const names = [];
  for (const name of readdirSync(dir)) {
    if (!TEMP_PATTERN.test(name)) continue;
    try {
      if (uid === undefined || lstatSync(path.join(dir, name)).uid === uid) names.push(name);
    } catch {
      // removed between readdir and lstat: not left behind
    }
  }
  return names.sort();
}

function snapshotFile(root) {
  const base = root ?? process.cwd();
  return (
    process.env['COGNITION_CLEAN_SNAPSHOT'] ??
    path.join(base, 'node_modules', '.cache', 'cognition', 'clean-snapshot.json')
  );
}

function describe(code) {
  if (code === '!!') return 'new ignored file';
  if (code === '??') return 'new untracked file';
  return `changed (${code.trim()})`;
}

/** What changed between two states, as printable lines. */
function compare(before, after) {
  const problems = [];
  if (before.checkout && after.checkout) {
    for (const [file, now] of Object.entries(after.checkout)) {
      const was = before.checkout[file];
      if (!was) problems.push(`${file}: ${describe(now.code)}`);
      else if (was.hash !== now.hash || was.code !== now.code) {
        problems.push(`${file}: rewritten by the run (was ${describe(was.code)} before it)`);
      }
    }
    for (const file of Object.keys(before.checkout)) {
      if (!after.checkout[file])
        problems.push(`${file}: its uncommitted state was changed by the run`);
    }
  }
  const known = new Set(before.temp);
  for (const name of after.temp) {
    if (!known.has(name))
      problems.push(`${path.join(after.tempDir, name)}: left in the temp directory`);
  }
  return problems;
}

function state(root) {
  const tempDir = os.tmpdir();
  return { checkout: root ? checkoutState(root) : null, tempDir, temp: tempState(tempDir) };
}

function main() {
  if (process.env['COGNITION_CHECK_CLEAN'] === '0') {
    console.log('check-clean: skipped (COGNITION_CHECK_CLEAN=0)');
    return 0;
  }
  const root = repoRoot();
  const file = snapshotFile(root);
  if (process.argv.includes('--snapshot')) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(state(root)));
    return 0;
  }
  if (!existsSync(file)) {
    console.error(`check-clean: no snapshot at ${file} (run with --snapshot before the suite)`);
    return 1;
  }
  const problems = compare(JSON.parse(readFileSync(file, 'utf8')), state(root));
  if (problems.length === 0) {
    console.log('check-clean: the run left the checkout and the temp directory as it found them');
    return 0;
  }
  console.error(
    `check-clean: the test run left ${problems.length} thing(s) behind (tests must clean up what they create):`,
  );
  for (const problem of problems) console.error(`  ${problem}`);
  return 1;
}

process.exitCode = main();
