import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalSandbox } from '@cognition/sandbox-local';
import type { Logger } from '../logger';
import { FakeExecutionBackend } from '../testing/fake-execution-backend';
import { silentLogger } from '../logger';
import { memorySection, readMemoryFiles } from './memory-files';

describe('memory files', () => {
  it('reads .cognition/AGENTS.md before AGENTS.md through the backend, skipping missing and empty ones', async () => {
    const backend = new FakeExecutionBackend('/ws');
    expect(await readMemoryFiles(backend, silentLogger)).toEqual([]);
    await backend.write('AGENTS.md', '  Run tests with npm test.\n');
    expect(await readMemoryFiles(backend, silentLogger)).toEqual([
      { path: 'AGENTS.md', content: 'Run tests with npm test.' },
    ]);
    await backend.write('.cognition/AGENTS.md', 'Never push to main.');
    expect((await readMemoryFiles(backend, silentLogger)).map((f) => f.path)).toEqual([
      '.cognition/AGENTS.md',
      'AGENTS.md',
    ]);
    await backend.write('AGENTS.md', '\n');
    expect((await readMemoryFiles(backend, silentLogger)).map((f) => f.path)).toEqual([
      '.cognition/AGENTS.md',
    ]);
  });

  it('skips (and logs) a memory file that points outside the workspace, keeping the other', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cognition-memory-'));
    try {
      const root = join(dir, 'ws');
      await mkdir(join(root, '.cognition'), { recursive: true });
      await writeFile(join(dir, 'secret.txt'), 'server secret');
      await symlink(join(dir, 'secret.txt'), join(root, '.cognition', 'AGENTS.md'));
      await writeFile(join(root, 'AGENTS.md'), 'Notes.');
      const warnings: object[] = [];
      const logger: Logger = { ...silentLogger, warn: (obj) => warnings.push(obj) };
      const backend = await createLocalSandbox().forSession('s1', root);
      expect(await readMemoryFiles(backend, logger)).toEqual([
        { path: 'AGENTS.md', content: 'Notes.' },
      ]);
      expect(warnings).toEqual([
        { file: '.cognition/AGENTS.md', err: expect.stringContaining('outside') as string },
      ]);
      await backend.terminate();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('shows whole files under their paths, and tells a writing agent to keep AGENTS.md', () => {
    const files = [
      { path: '.cognition/AGENTS.md', content: 'Never push to main.' },
      { path: 'AGENTS.md', content: 'Run tests with npm test.' },
    ];
    const section = memorySection(files, { writable: true });
    expect(section).toContain('## Project memory');
    expect(section).toContain(
      '### .cognition/AGENTS.md\nNever push to main.\n\n### AGENTS.md\nRun tests with npm test.',
    );
    expect(section).toContain('keep it current with your file tools');
    expect(memorySection(files, { writable: false })).not.toContain('file tools');
    expect(memorySection([], { writable: true })).toBe('');
  });

  it('truncates past the budget with a visible note, and names files left out entirely', () => {
    const files = [
      { path: '.cognition/AGENTS.md', content: 'a'.repeat(30) },
      { path: 'AGENTS.md', content: 'b'.repeat(50) },
    ];
    const fits = memorySection(files, { writable: false, maxChars: 80 });
    expect(fits).not.toContain('Truncated');
    const cut = memorySection(files, { writable: false, maxChars: 40 });
    expect(cut).toContain(
      `### AGENTS.md\n${'b'.repeat(10)}\n[Truncated for length: the first 10 of 50 characters are shown; read the rest with read_file.]`,
    );
    expect(cut).not.toContain('b'.repeat(11));
    const none = memorySection(files, { writable: false, maxChars: 30 });
    expect(none).toContain(
      '### AGENTS.md\n[Not shown for length (50 characters); read it with read_file.]',
    );
  });
});
