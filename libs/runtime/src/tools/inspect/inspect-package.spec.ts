import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { ExecutionBackend } from '@cognition/sandbox';
import { createLocalSandbox } from '@cognition/sandbox-local';
import type { ToolContext } from '../types';
import { createInspectPackageTool } from './inspect-package';

/** A package written into a temp workspace, as `npm install` would leave it. */
function writePackage(root: string, name: string, files: Record<string, string>): void {
  const dir = path.join(root, 'node_modules', name);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
}

describe('inspect_package', () => {
  let session: string;
  let shared: string;
  let backend: ExecutionBackend;
  const tool = () => createInspectPackageTool({ workspaceRoot: shared });
  const ctx = (): ToolContext => ({
    backend: () => Promise.resolve(backend),
    signal: new AbortController().signal,
    emit: () => undefined,
    todos: [],
    delegate: () => Promise.reject(new Error('no delegation here')),
  });
  const run = (args: Record<string, unknown>) => tool().run(args, ctx());

  beforeEach(async () => {
    session = mkdtempSync(path.join(os.tmpdir(), 'cognition-inspect-session-'));
    shared = mkdtempSync(path.join(os.tmpdir(), 'cognition-inspect-shared-'));
    backend = await createLocalSandbox({}).forSession('s1', session);
  });
  afterEach(async () => {
    await backend.terminate();
    rmSync(session, { recursive: true, force: true });
    rmSync(shared, { recursive: true, force: true });
  });

  it('lists an npm package’s exports with their kinds from its declarations', async () => {
    writePackage(session, '@acme/geo', {
      'package.json': JSON.stringify({
        name: '@acme/geo',
        version: '2.1.0',
        description: 'Geometry helpers',
        exports: {
          '.': {
            types: './dist/index.d.ts',
            import: './dist/index.mjs',
            require: './dist/index.cjs',
          },
          './units': './dist/units.js',
        },
      }),
      'dist/index.d.ts': [
        'export declare function area(w: number, h: number): number;',
        'export declare class Shape { name: string }',
        'export interface Point { x: number; y: number }',
        'export type Unit = "m" | "ft";',
        'export declare const PI: number;',
        'export declare let precision: number;',
        'export declare enum Axis { X, Y }',
        "export * from './more';",
        "export { area as surface } from './alias';",
      ].join('\n'),
      'dist/more.d.ts': 'export declare function distance(a: number, b: number): number;',
      'dist/alias.d.ts': 'export declare function area(w: number, h: number): number;',
    });
    const result = await run({ name: '@acme/geo' });
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.output) as Record<string, unknown>;
    expect(report).toMatchObject({
      ecosystem: 'npm',
      name: '@acme/geo',
      version: '2.1.0',
      description: 'Geometry helpers',
      location: 'node_modules/@acme/geo',
      types: 'dist/index.d.ts',
      entryPoints: { '.': './dist/index.mjs', './units': './dist/units.js' },
    });
    expect(report['exports']).toEqual([
      { name: 'area', kind: 'function' },
      { name: 'Axis', kind: 'enum' },
      { name: 'distance', kind: 'function' },
      { name: 'PI', kind: 'const' },
      { name: 'Point', kind: 'interface' },
      { name: 'precision', kind: 'variable' },
      { name: 'Shape', kind: 'class' },
      { name: 'surface', kind: 'function' },
      { name: 'Unit', kind: 'type' },
    ]);
  });

  it('falls back to the workspace root, and to package.json entry points without types', async () => {
    writePackage(shared, 'plain-js', {
      'package.json': JSON.stringify({ name: 'plain-js', version: '0.3.0', main: 'lib/main.js' }),
      'lib/main.js': 'module.exports = { hello() {} };',
    });
    const report = JSON.parse((await run({ name: 'plain-js', ecosystem: 'npm' })).output) as Record<
      string,
      unknown
    >;
    expect(report).toMatchObject({
      version: '0.3.0',
      location: '<workspace root>/node_modules/plain-js',
      entryPoints: { '.': 'lib/main.js' },
      types: null,
      exports: null,
    });
    expect(String(report['note'])).toMatch(/ships no type declarations/);
  });

  it('never reads declarations outside the package (a symlink out of it)', async () => {
    const outside = mkdtempSync(path.join(os.tmpdir(), 'cognition-inspect-outside-'));
    try {
      writeFileSync(path.join(outside, 'secret.d.ts'), 'export declare const SECRET: string;');
      writePackage(session, 'sneaky', {
        'package.json': JSON.stringify({ name: 'sneaky', version: '1.0.0', types: 'index.d.ts' }),
      });
      symlinkSync(
        path.join(outside, 'secret.d.ts'),
        path.join(session, 'node_modules', 'sneaky', 'index.d.ts'),
      );
      const report = JSON.parse((await run({ name: 'sneaky' })).output) as Record<string, unknown>;
      expect(report['exports']).toBeNull();
      expect(JSON.stringify(report)).not.toContain('SECRET');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('answers a missing package or a bad name with a tool error', async () => {
    const missing = await run({ name: 'left-pad' });
    expect(missing.exitCode).toBe(1);
    expect(missing.output).toMatch(/npm package "left-pad" is not installed/);
    const bad = await run({ name: '../../etc' });
    expect(bad).toEqual({ exitCode: 1, output: '"../../etc" is not an npm package name' });
    const badPython = await run({ name: 'os; rm -rf /', ecosystem: 'python' });
    expect(badPython.exitCode).toBe(1);
    expect(badPython.output).toMatch(/is not a Python module name/);
  });

  const hasPython = spawnSync('python3', ['--version']).status === 0;
  (hasPython ? it : it.skip)('inspects a Python module with python3 in the sandbox', async () => {
    writeFileSync(
      path.join(session, 'shapes.py'),
      [
        '__version__ = "1.4"',
        'import math',
        'class Circle:',
        '    pass',
        'def area(r):',
        '    return math.pi * r * r',
        'UNIT = "cm"',
        '_private = 1',
      ].join('\n'),
    );
    const result = await run({ name: 'shapes', ecosystem: 'python' });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.output)).toMatchObject({
      ecosystem: 'python',
      name: 'shapes',
      version: '1.4',
      exports: [
        { name: 'Circle', kind: 'class' },
        { name: 'UNIT', kind: 'variable' },
        { name: 'area', kind: 'function' },
        { name: 'math', kind: 'module' },
      ],
    });
    const missing = await run({ name: 'no_such_module_here', ecosystem: 'python' });
    expect(missing.exitCode).toBe(1);
    expect(missing.output).toMatch(/cannot be imported: ModuleNotFoundError/);
  });
});
