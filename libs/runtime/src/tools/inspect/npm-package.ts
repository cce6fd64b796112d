import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Symbol as TsSymbol } from 'typescript';

/** What `inspect_package` reports of an npm package. */
export interface NpmPackageReport {
  ecosystem: 'npm';
  name: string;
  version: string | null;
  /** Where it was found (relative to the session's workspace, or `<workspace root>/…`). */
  location: string;
  description: string | null;
  /** `exports` subpaths (or `main`) → the file each resolves to for `import`/`require`. */
  entryPoints: Record<string, string>;
  /** The declaration file the exports were read from; null: the package ships no types. */
  types: string | null;
  /** Exported names with their kinds; null when there are no types to read them from. */
  exports: { name: string; kind: ExportKind }[] | null;
  note?: string;
}

export type ExportKind =
  | 'function'
  | 'class'
  | 'interface'
  | 'type'
  | 'enum'
  | 'const'
  | 'variable'
  | 'namespace'
  | 'unknown';

/** npm package names: an optional scope, then a name (no path tricks). */
const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/i;

export class PackageLookupError extends Error {}

interface PackageJson {
  name?: unknown;
  version?: unknown;
  description?: unknown;
  main?: unknown;
  types?: unknown;
  typings?: unknown;
  exports?: unknown;
}

/** The package's directory under the first root whose node_modules holds it. */
function findPackage(name: string, roots: readonly string[]): { dir: string; root: string } {
  for (const root of roots) {
    const dir = path.join(root, 'node_modules', name);
    if (existsSync(path.join(dir, 'package.json'))) return { dir, root };
  }
  throw new PackageLookupError(
    `npm package "${name}" is not installed in the session's workspace (looked in node_modules of: ${roots.map((r) => r).join(', ')})`,
  );
}

/** Every path the tool reads must stay inside the package (symlinks resolved). */
function inside(dir: string, file: string): boolean {
  const relative = path.relative(dir, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** The target of an `exports` condition value: `import`, then `require`, then `default`. */
function conditionTarget(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = conditionTarget(item);
      if (found) return found;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of ['import', 'require', 'node', 'default']) {
      const found = conditionTarget(record[key]);
      if (found) return found;
    }
  }
  return null;
}

/** The `types` condition of the root export, if any. */
function typesCondition(value: unknown): string | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  if (typeof record['types'] === 'string') return record['types'];
  for (const key of ['import', 'require', 'node', 'default']) {
    const found = typesCondition(record[key]);
    if (found) return found;
  }
  return null;
}

function entryPointsOf(pkg: PackageJson): Record<string, string> {
  const entries: Record<string, string> = {};
  const exportsField = pkg.exports;
  if (typeof exportsField === 'string' || Array.isArray(exportsField)) {
    const target = conditionTarget(exportsField);
    if (target) entries['.'] = target;
  } else if (exportsField && typeof exportsField === 'object') {
    const record = exportsField as Record<string, unknown>;
    const subpaths = Object.keys(record).filter((key) => key.startsWith('.'));
    if (subpaths.length === 0) {
      const target = conditionTarget(record);
      if (target) entries['.'] = target;
    }
    for (const key of subpaths) {
      const target = conditionTarget(record[key]);
      if (target) entries[key] = target;
    }
  }
  if (Object.keys(entries).length === 0 && typeof pkg.main === 'string') entries['.'] = pkg.main;
  return entries;
}

function declarationFileOf(dir: string, pkg: PackageJson): string | null {
  const exportsField = pkg.exports as Record<string, unknown> | undefined;
  const rootExport =
    exportsField && typeof exportsField === 'object' && !Array.isArray(exportsField)
      ? (exportsField['.'] ?? exportsField)
      : undefined;
  const candidates = [
    typesCondition(rootExport),
    typeof pkg.types === 'string' ? pkg.types : null,
    typeof pkg.typings === 'string' ? pkg.typings : null,
    typeof pkg.main === 'string' ? pkg.main.replace(/\.(c|m)?js$/, '.d.$1ts') : null,
    'index.d.ts',
  ];
  for (const candidate of candidates) {
    if (!candidate) continue;
    const file = path.resolve(dir, candidate);
    if (existsSync(file) && statSync(file).isFile()) return file;
  }
  return null;
}

/**
 * Reads an npm package installed under one of `roots` (the session's workspace first, then the
 * server's workspace root): its package.json, and its exported names and kinds from its
 * declaration file through the TypeScript compiler API. Files are only read inside the
 * package's own (real) directory: a symlink out of it, or a re-export from another package, is
 * not followed.
 */
export async function inspectNpmPackage(
  name: string,
  roots: readonly { path: string; label: string }[],
): Promise<NpmPackageReport> {
  if (!PACKAGE_NAME.test(name)) {
    throw new PackageLookupError(`"${name}" is not an npm package name`);
  }
  const found = findPackage(
    name,
    roots.map((r) => r.path),
  );
  const label = roots.find((r) => r.path === found.root)?.label ?? found.root;
  const dir = realpathSync(found.dir);
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PackageJson;
  const declarations = declarationFileOf(dir, pkg);
  const real = declarations ? realpathSync(declarations) : null;
  const report: NpmPackageReport = {
    ecosystem: 'npm',
    name,
    version: typeof pkg.version === 'string' ? pkg.version : null,
    location: path.join(label, 'node_modules', name),
    description: typeof pkg.description === 'string' ? pkg.description : null,
    entryPoints: entryPointsOf(pkg),
    types: real && inside(dir, real) ? path.relative(dir, real) : null,
    exports: null,
  };
  if (!real || !inside(dir, real)) {
    report.note =
      'The package ships no type declarations: its exported names cannot be listed without running it; entryPoints come from its package.json.';
    return report;
  }
  report.exports = await exportedNames(real, dir);
  return report;
}

async function exportedNames(
  file: string,
  dir: string,
): Promise<{ name: string; kind: ExportKind }[]> {
  // Loaded on first use: the compiler is large and most runs never inspect a package.
  const loaded = await import('typescript');
  // CommonJS module: its namespace or its default export, depending on the loader.
  const ts = (loaded as unknown as { default?: typeof loaded.default }).default ?? loaded;
  const host = ts.createCompilerHost({ noLib: true, allowJs: false });
  const readable = (fileName: string) => {
    try {
      return inside(dir, realpathSync(fileName));
    } catch {
      return false;
    }
  };
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (fileName) => (readable(fileName) ? readFile(fileName) : undefined);
  host.fileExists = (fileName) => readable(fileName) && fileExists(fileName);
  const program = ts.createProgram({
    rootNames: [file],
    options: { noLib: true, noResolve: false, types: [], skipLibCheck: true },
    host,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const moduleSymbol = source ? checker.getSymbolAtLocation(source) : undefined;
  if (!moduleSymbol) return [];
  const kindOf = (symbol: TsSymbol): ExportKind => {
    let target = symbol;
    if (target.flags & ts.SymbolFlags.Alias) {
      try {
        target = checker.getAliasedSymbol(target);
      } catch {
        return 'unknown';
      }
    }
    const f = target.flags;
    if (f & ts.SymbolFlags.Class) return 'class';
    if (f & ts.SymbolFlags.Function) return 'function';
    if (f & ts.SymbolFlags.Enum) return 'enum';
    if (f & ts.SymbolFlags.Interface) return 'interface';
    if (f & ts.SymbolFlags.TypeAlias) return 'type';
    if (f & ts.SymbolFlags.BlockScopedVariable) {
      const declaration = target.valueDeclaration;
      const list = declaration?.parent;
      return list && ts.isVariableDeclarationList(list) && list.flags & ts.NodeFlags.Const
        ? 'const'
        : 'variable';
    }
    if (f & ts.SymbolFlags.Variable) return 'variable';
    if (f & (ts.SymbolFlags.ValueModule | ts.SymbolFlags.NamespaceModule)) return 'namespace';
    return 'unknown';
  };
  return checker
    .getExportsOfModule(moduleSymbol)
    .map((symbol) => ({ name: symbol.getName(), kind: kindOf(symbol) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}
