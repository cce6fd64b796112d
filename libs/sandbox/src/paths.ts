import { promises as fs } from 'node:fs';
import path from 'node:path';
import { SandboxError } from './errors';

/** Protected by default: the server's own per-workspace state. */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = ['.cognition'];

/** Symlink hops followed while resolving one path (the kernel's own limit is 40). */
const MAX_SYMLINK_HOPS = 40;

export interface ResolvedPath {
  /** Real absolute host path (every existing component resolved, symlinks included). */
  absolute: string;
  /** Path relative to the real session root, `/`-separated; `''` is the root itself. */
  relative: string;
  /** Whether the whole path exists (otherwise only its deepest existing ancestor does). */
  exists: boolean;
}

export interface PathGuardOptions {
  /** Host directory of the session; must exist. */
  root: string;
  /** Paths relative to the root that cannot be written, edited or deleted. */
  protectedPaths?: readonly string[];
  /**
   * Absolute path under which commands see the root (docker: `/workspace`). Absolute arguments
   * under it are mapped into the root, so the model can use the paths its commands print.
   */
  virtualRoot?: string;
}

/**
 * Confines paths to one session root. Every path is resolved the way the kernel would open it
 * (symlinks included; for a path that does not exist yet, its deepest existing ancestor is
 * resolved, and a dangling symlink is followed to where it points), and the result must stay
 * inside the real root. Operations then act on the resolved path, never on the raw argument.
 *
 * Residual risk: a process that can change the workspace concurrently (a command of the same
 * session) could swap a checked directory for a symlink between the check and the use. The final
 * component is opened with O_NOFOLLOW where the platform allows, which narrows that window.
 */
export class PathGuard {
  private constructor(
    /** Real absolute path of the session root. */
    readonly root: string,
    private readonly protectedPaths: readonly string[],
    private readonly virtualRoot: string | undefined,
  ) {}

  /** @throws SandboxError INVALID_ARGUMENT for a bad protected path, NOT_FOUND for a missing root. */
  static async create(options: PathGuardOptions): Promise<PathGuard> {
    const protectedPaths = (options.protectedPaths ?? DEFAULT_PROTECTED_PATHS).map(
      normalizeProtectedPath,
    );
    let root: string;
    try {
      root = await fs.realpath(options.root);
    } catch (error) {
      throw new SandboxError('NOT_FOUND', `Session root ${options.root} does not exist`, {
        cause: error,
      });
    }
    const virtualRoot =
      options.virtualRoot === undefined ? undefined : path.posix.normalize(options.virtualRoot);
    return new PathGuard(root, protectedPaths, virtualRoot);
  }

  /**
   * Resolves `input` (relative to the root, or absolute) and checks it stays inside the root.
   * @throws SandboxError PATH_VIOLATION outside the root, INVALID_ARGUMENT for a malformed path.
   */
  async resolve(input: string, field = 'path'): Promise<ResolvedPath> {
    return this.resolveCandidate(this.candidate(input, field), input);
  }

  /**
   * Resolves the parent of `input` but not its last component, for operations on a directory
   * entry itself (deleting a symlink removes the link, not its target).
   * @throws SandboxError PATH_VIOLATION outside the root or for the root itself.
   */
  async resolveEntry(input: string, field = 'path'): Promise<ResolvedPath> {
    const candidate = this.candidate(input, field);
    const parent = await this.resolveCandidate(path.dirname(candidate), input);
    const absolute = path.join(parent.absolute, path.basename(candidate));
    const relative = this.relativeInside(absolute, input);
    if (relative === '') {
      throw new SandboxError('PATH_VIOLATION', `${field} "${input}" is the workspace root itself`);
    }
    const exists = await fs.lstat(absolute).then(
      () => true,
      () => false,
    );
    return { absolute, relative, exists };
  }

  /**
   * Refuses writes to a protected path or (for a recursive delete) to an ancestor of one.
   * Protected paths are themselves resolved, so a symlink to one does not get around the rule.
   * @throws SandboxError PROTECTED_PATH
   */
  async assertWritable(
    target: ResolvedPath,
    input: string,
    operation: 'write' | 'edit' | 'delete',
  ): Promise<void> {
    for (const protectedPath of this.protectedPaths) {
      const resolved = await this.resolve(protectedPath).catch(() => undefined);
      const protectedRelative = resolved?.relative ?? protectedPath;
      for (const candidate of new Set([protectedPath, protectedRelative])) {
        if (isWithin(target.relative, candidate)) {
          throw new SandboxError(
            'PROTECTED_PATH',
            `Cannot ${operation} "${input}": ${protectedPath}/ is a protected path`,
          );
        }
        if (operation === 'delete' && isWithin(candidate, target.relative)) {
          throw new SandboxError(
            'PROTECTED_PATH',
            `Cannot delete "${input}": it contains the protected path ${protectedPath}/`,
          );
        }
      }
    }
  }

  /** The `/`-separated path of a real absolute path inside the root. */
  relativeOf(absolute: string): string {
    return path.relative(this.root, absolute).split(path.sep).join('/');
  }

  private async resolveCandidate(candidate: string, input: string): Promise<ResolvedPath> {
    const { real, exists } = await resolveReal(candidate, input);
    return { absolute: real, relative: this.relativeInside(real, input), exists };
  }

  private candidate(input: string, field: string): string {
    if (typeof input !== 'string') {
      throw new SandboxError('INVALID_ARGUMENT', `${field} must be a string`);
    }
    if (input.includes('\0')) {
      throw new SandboxError('INVALID_ARGUMENT', `${field} must not contain NUL characters`);
    }
    const trimmed = input === '' ? '.' : input;
    if (this.virtualRoot !== undefined && path.isAbsolute(trimmed)) {
      const normalized = path.posix.normalize(trimmed);
      if (normalized === this.virtualRoot || normalized.startsWith(`${this.virtualRoot}/`)) {
        return path.join(this.root, normalized.slice(this.virtualRoot.length));
      }
    }
    return path.resolve(this.root, trimmed);
  }

  private relativeInside(real: string, input: string): string {
    const relative = path.relative(this.root, real);
    if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
      throw new SandboxError(
        'PATH_VIOLATION',
        `Path "${input}" resolves outside the workspace root; only paths inside it are allowed`,
      );
    }
    return relative.split(path.sep).join('/');
  }
}

function normalizeProtectedPath(raw: string): string {
  const normalized = path.posix
    .normalize(raw.trim())
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '');
  if (
    normalized === '' ||
    normalized === '.' ||
    normalized === '..' ||
    normalized.startsWith('../') ||
    path.posix.isAbsolute(normalized)
  ) {
    throw new SandboxError(
      'INVALID_ARGUMENT',
      `protectedPaths: "${raw}" must be a path relative to the session root, inside it`,
    );
  }
  return normalized;
}

/** Whether `relative` is `base` or inside it (both `/`-separated, relative to the root). */
function isWithin(relative: string, base: string): boolean {
  return base === '' || relative === base || relative.startsWith(`${base}/`);
}

async function resolveReal(
  candidate: string,
  input: string,
): Promise<{ real: string; exists: boolean }> {
  let current = candidate;
  const missing: string[] = [];
  let hops = 0;
  for (;;) {
    try {
      const real = await fs.realpath(current);
      return { real: path.join(real, ...missing), exists: missing.length === 0 };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') {
        throw new SandboxError('PATH_VIOLATION', `Path "${input}" has a symlink loop`);
      }
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    const stat = await fs.lstat(current).catch(() => undefined);
    if (stat?.isSymbolicLink()) {
      // A dangling symlink: writing through it would create its target, so follow it.
      hops += 1;
      if (hops > MAX_SYMLINK_HOPS) {
        throw new SandboxError('PATH_VIOLATION', `Path "${input}" has too many symlinks`);
      }
      current = path.resolve(path.dirname(current), await fs.readlink(current));
      continue;
    }
    const parent = path.dirname(current);
    missing.unshift(path.basename(current));
    current = parent;
  }
}
