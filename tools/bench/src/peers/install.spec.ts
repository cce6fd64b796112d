import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ensurePeersInstalled,
  markPeersInstalled,
  PEERS_DIR,
  peersDir,
  peersInstallReason,
} from './install';

describe('the peers install state', () => {
  let repoRoot: string;

  beforeEach(() => {
    repoRoot = mkdtempSync(path.join(tmpdir(), 'bench-peers-'));
    mkdirSync(path.join(repoRoot, PEERS_DIR), { recursive: true });
    writeFileSync(path.join(peersDir(repoRoot), 'package.json'), '{"name":"p"}\n');
    writeFileSync(path.join(peersDir(repoRoot), 'package-lock.json'), '{"lockfileVersion":3}\n');
  });
  afterEach(() => rmSync(repoRoot, { recursive: true, force: true }));

  it('needs an install before the first one, and after one that did not finish', () => {
    expect(peersInstallReason(repoRoot)).toBe('first use: not installed yet');
    mkdirSync(path.join(peersDir(repoRoot), 'node_modules'));
    expect(peersInstallReason(repoRoot)).toBe('the last install did not finish');
  });

  it('is installed once marked, until package.json or the lock file changes', async () => {
    mkdirSync(path.join(peersDir(repoRoot), 'node_modules'));
    markPeersInstalled(repoRoot);
    expect(peersInstallReason(repoRoot)).toBeUndefined();
    const lines: string[] = [];
    // Installed: nothing to do, nothing said (no npm run here).
    await ensurePeersInstalled(repoRoot, (line) => lines.push(line));
    expect(lines).toEqual([]);
    writeFileSync(
      path.join(peersDir(repoRoot), 'package-lock.json'),
      '{"lockfileVersion":3,"x":1}\n',
    );
    expect(peersInstallReason(repoRoot)).toBe(
      'its package.json or package-lock.json changed since the last install',
    );
  });
});
