import { constants, createReadStream, promises as fs } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import picomatch from 'picomatch';
import { nonNegativeInteger } from './config';
import { SandboxError } from './errors';
import type { PathGuard, ResolvedPath } from './paths';
import type { FileEntry, GrepMatch, ReadOptions } from './port';

/** Files larger than this are skipped by `grep` (logs, build outputs, data files). */
const GREP_MAX_FILE_BYTES = 10 * 1024 * 1024;
/** A NUL byte in this many leading bytes marks a file as binary for `grep`. */
const BINARY_SNIFF_BYTES = 8000;
/** Longer matching lines are cut, so one minified file cannot flood the model's context. */
const GREP_MAX_LINE_CHARS = 1000;
const DEFAULT_GREP_MAX_MATCHES = 1000;

/** Owner given to every file and directory the file operations create. */
export interface FileOwner {
  uid: number;
  gid: number;
}

/**
 * The file operations of a session, shared by every backend (they act on the host workspace
 * directly; the docker backend mounts the same directory). Every path goes through the
 * `PathGuard`; write, edit and delete also respect its protected paths.
 */
export class WorkspaceFiles {
  constructor(
    private readonly guard: PathGuard,
    private readonly owner?: FileOwner,
  ) {}

  async ls(input = '.'): Promise<FileEntry[]> {
    const target = await this.existing(input);
    const stat = await fs.stat(target.absolute);
    if (!stat.isDirectory()) return [toEntry(target.relative, stat)];
    const names = await fs.readdir(target.absolute);
    const entries = await Promise.all(
      names.map(async (name) => {
        const stat = await fs.lstat(path.join(target.absolute, name)).catch(() => undefined);
        return stat && toEntry(joinRelative(target.relative, name), stat);
      }),
    );
    return entries
      .filter((entry): entry is FileEntry => entry !== undefined)
      .sort((a, b) => compare(a.path, b.path));
  }

  async read(input: string, options: ReadOptions = {}): Promise<string> {
    const offset = nonNegativeInteger(options.offset, 'offset');
    const limit = nonNegativeInteger(options.limit, 'limit');
    const target = await this.existing(input);
    await this.assertFile(target, input);
    if (offset === undefined && limit === undefined) {
      return fs.readFile(target.absolute, 'utf8');
    }
    const first = offset ?? 0;
    const end = limit === undefined ? Infinity : first + limit;
    const lines: string[] = [];
    if (end > first) {
      const stream = createReadStream(target.absolute, { encoding: 'utf8' });
      const reader = createInterface({ input: stream, crlfDelay: Infinity });
      let index = 0;
      try {
        for await (const line of reader) {
          if (index >= first) lines.push(line);
          index += 1;
          if (index >= end) break;
        }
      } finally {
        reader.close();
        stream.destroy();
      }
    }
    return lines.join('\n');
  }

  async write(input: string, content: string): Promise<void> {
    if (typeof content !== 'string') {
      throw new SandboxError('INVALID_ARGUMENT', 'content must be a string');
    }
    const target = await this.guard.resolve(input);
    await this.guard.assertWritable(target, input, 'write');
    if (target.exists && (await fs.stat(target.absolute)).isDirectory()) {
      throw new SandboxError('IS_A_DIRECTORY', `"${input}" is a directory`);
    }
    await this.makeParents(target.absolute, input);
    await this.writeFile(target.absolute, content, input, !target.exists);
  }

  async edit(input: string, oldText: string, newText: string): Promise<void> {
    if (typeof oldText !== 'string' || oldText === '') {
      throw new SandboxError('INVALID_ARGUMENT', 'oldText must be a non-empty string');
    }
    if (typeof newText !== 'string') {
      throw new SandboxError('INVALID_ARGUMENT', 'newText must be a string');
    }
    const target = await this.existing(input);
    await this.guard.assertWritable(target, input, 'edit');
    await this.assertFile(target, input);
    const content = await fs.readFile(target.absolute, 'utf8');
    const matches = countOccurrences(content, oldText);
    if (matches === 0) {
      throw new SandboxError(
        'EDIT_NO_MATCH',
        `oldText was not found in "${input}" (0 matches); read the file and copy the exact text, including whitespace`,
      );
    }
    if (matches > 1) {
      throw new SandboxError(
        'EDIT_AMBIGUOUS',
        `oldText occurs ${matches} times in "${input}" (${matches} matches); include more surrounding text so it matches exactly once`,
      );
    }
    const at = content.indexOf(oldText);
    // Slicing, not String.replace: `$&`, `$1`... in newText must stay literal.
    const updated = content.slice(0, at) + newText + content.slice(at + oldText.length);
    await this.writeFile(target.absolute, updated, input, false);
  }

  async glob(pattern: string, input = '.'): Promise<string[]> {
    if (typeof pattern !== 'string' || pattern.trim() === '') {
      throw new SandboxError('INVALID_ARGUMENT', 'pattern must be a non-empty glob pattern');
    }
    const base = await this.existingDirectory(input);
    const matches = picomatch(pattern, { dot: false });
    const found: string[] = [];
    await this.walk(base.absolute, '', (relativeToBase, absolute) => {
      if (matches(relativeToBase)) found.push(this.guard.relativeOf(absolute));
    });
    return found.sort(compare);
  }

  async grep(
    pattern: string,
    options: { path?: string; glob?: string; maxMatches?: number } = {},
  ): Promise<GrepMatch[]> {
    if (typeof pattern !== 'string' || pattern === '') {
      throw new SandboxError('INVALID_ARGUMENT', 'pattern must be a non-empty string');
    }
    const maxMatches =
      nonNegativeInteger(options.maxMatches, 'maxMatches') ?? DEFAULT_GREP_MAX_MATCHES;
    // Patterns without a slash match the file name at any depth (`*.ts`), like grep --include.
    const include =
      options.glob === undefined ? undefined : picomatch(options.glob, { basename: true });
    const target = await this.existing(options.path ?? '.');
    const files: string[] = [];
    const stat = await fs.stat(target.absolute);
    if (stat.isDirectory()) {
      await this.walk(target.absolute, '', (relativeToBase, absolute, entry) => {
        if (entry.isFile() && (include === undefined || include(relativeToBase))) {
          files.push(absolute);
        }
      });
      files.sort(compare);
    } else {
      files.push(target.absolute);
    }
    const results: GrepMatch[] = [];
    for (const file of files) {
      if (results.length >= maxMatches) break;
      const text = await readTextFile(file);
      if (text === undefined) continue;
      const lines = text.split(/\r?\n/);
      for (let index = 0; index < lines.length && results.length < maxMatches; index += 1) {
        const line = lines[index] ?? '';
        if (line.includes(pattern)) {
          results.push({
            path: this.guard.relativeOf(file),
            line: index + 1,
            text: line.length > GREP_MAX_LINE_CHARS ? line.slice(0, GREP_MAX_LINE_CHARS) : line,
          });
        }
      }
    }
    return results;
  }

  async delete(input: string): Promise<void> {
    const target = await this.guard.resolveEntry(input);
    if (!target.exists) throw notFound(input);
    await this.guard.assertWritable(target, input, 'delete');
    await fs.rm(target.absolute, { recursive: true, force: false });
  }

  /** Resolves a directory argument (e.g. a command's cwd) that must exist. */
  async existingDirectory(input: string, field = 'path'): Promise<ResolvedPath> {
    const target = await this.existing(input, field);
    if (!(await fs.stat(target.absolute)).isDirectory()) {
      throw new SandboxError('NOT_A_DIRECTORY', `${field} "${input}" is not a directory`);
    }
    return target;
  }

  private async existing(input: string, field = 'path'): Promise<ResolvedPath> {
    const target = await this.guard.resolve(input, field);
    if (!target.exists) throw notFound(input, field);
    return target;
  }

  private async assertFile(target: ResolvedPath, input: string): Promise<void> {
    if ((await fs.stat(target.absolute)).isDirectory()) {
      throw new SandboxError('IS_A_DIRECTORY', `"${input}" is a directory, not a file`);
    }
  }

  private async makeParents(absolute: string, input: string): Promise<void> {
    const parent = path.dirname(absolute);
    try {
      const firstCreated = await fs.mkdir(parent, { recursive: true });
      if (firstCreated !== undefined && this.owner) {
        // Every directory from the first created one down to the parent is new.
        for (let dir = parent; ; dir = path.dirname(dir)) {
          await fs.lchown(dir, this.owner.uid, this.owner.gid);
          if (dir === firstCreated || dir === path.dirname(dir)) break;
        }
      }
    } catch (error) {
      if (
        (error as NodeJS.ErrnoException).code === 'ENOTDIR' ||
        (error as NodeJS.ErrnoException).code === 'EEXIST'
      ) {
        throw new SandboxError('NOT_A_DIRECTORY', `A parent of "${input}" is a file`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  private async writeFile(
    absolute: string,
    content: string,
    input: string,
    created: boolean,
  ): Promise<void> {
    // O_NOFOLLOW: the path was resolved; a symlink appearing here since then is refused.
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(absolute, flags, 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
        throw new SandboxError(
          'PATH_VIOLATION',
          `"${input}" became a symlink; refusing to follow it`,
          {
            cause: error,
          },
        );
      }
      throw error;
    }
    try {
      await handle.writeFile(content, 'utf8');
      if (created && this.owner) await handle.chown(this.owner.uid, this.owner.gid);
    } finally {
      await handle.close();
    }
  }

  /** Depth-first walk that never follows symlinked directories (they could lead outside). */
  private async walk(
    absoluteDir: string,
    relativeDir: string,
    visit: (relative: string, absolute: string, entry: Dirent) => void,
  ): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(absoluteDir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => compare(a.name, b.name));
    for (const entry of entries) {
      const relative = relativeDir === '' ? entry.name : `${relativeDir}/${entry.name}`;
      const absolute = path.join(absoluteDir, entry.name);
      visit(relative, absolute, entry);
      if (entry.isDirectory()) await this.walk(absolute, relative, visit);
    }
  }
}

function toEntry(relative: string, stat: Stats): FileEntry {
  const type: FileEntry['type'] = stat.isSymbolicLink()
    ? 'symlink'
    : stat.isDirectory()
      ? 'directory'
      : stat.isFile()
        ? 'file'
        : 'other';
  return { path: relative === '' ? '.' : relative, type, size: stat.size };
}

function joinRelative(base: string, name: string): string {
  return base === '' ? name : `${base}/${name}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function notFound(input: string, field = 'path'): SandboxError {
  return new SandboxError('NOT_FOUND', `${field} "${input}" does not exist`);
}

function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (
    let at = haystack.indexOf(needle);
    at !== -1;
    at = haystack.indexOf(needle, at + needle.length)
  ) {
    count += 1;
  }
  return count;
}

/** The file's text, or undefined when it is too large or looks binary. */
async function readTextFile(file: string): Promise<string | undefined> {
  const stat = await fs.stat(file).catch(() => undefined);
  if (!stat?.isFile() || stat.size > GREP_MAX_FILE_BYTES) return undefined;
  const buffer = await fs.readFile(file).catch(() => undefined);
  if (buffer === undefined || buffer.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return undefined;
  return buffer.toString('utf8');
}
