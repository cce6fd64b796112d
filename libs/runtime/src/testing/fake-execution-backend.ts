import type {
  ExecuteOptions,
  ExecuteResult,
  ExecutionBackend,
  ExecutionBackendFactory,
  FileEntry,
  GrepMatch,
  OrphanReport,
  OrphanTarget,
  ReadOptions,
  SandboxProcess,
} from '@cognition/sandbox';
import { SandboxError } from '@cognition/sandbox';
import picomatch from 'picomatch';

/** Decides what a command "does" in the fake sandbox. */
export type FakeCommandHandler = (
  command: string,
  options: ExecuteOptions,
) => Promise<ExecuteResult>;

function normalize(path: string | undefined): string {
  const parts: string[] = [];
  for (const part of (path ?? '').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0)
        throw Object.assign(new Error(`path escapes the workspace: ${path}`), {
          code: 'PATH_VIOLATION',
        });
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
}

/**
 * An in-memory ExecutionBackend for runtime tests: files live in a Map, commands go to a
 * handler (default: echo the command with exit code 0). `hangingCommand` makes a command that
 * only ends when its signal aborts, exiting 130 like a process killed by SIGINT.
 */
export class FakeExecutionBackend implements ExecutionBackend {
  readonly kind = 'local' as const;
  readonly files = new Map<string, string>();
  readonly commands: string[] = [];
  terminated = false;

  constructor(
    readonly root: string,
    private readonly onExecute: FakeCommandHandler = (command) =>
      Promise.resolve({
        output: `ran: ${command}`,
        exitCode: 0,
        truncated: false,
        timedOut: false,
      }),
  ) {}

  execute(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    this.commands.push(command);
    return this.onExecute(command, options);
  }

  /** Runs no processes: a stdio MCP server needs a real backend (the local one in tests). */
  spawn(program: string): Promise<SandboxProcess> {
    return Promise.reject(
      new SandboxError('INVALID_COMMAND', `${program}: the fake sandbox runs no processes`),
    );
  }

  ls(path?: string): Promise<FileEntry[]> {
    const dir = normalize(path);
    const prefix = dir === '' ? '' : `${dir}/`;
    const entries = new Map<string, FileEntry>();
    for (const [file, content] of this.files) {
      if (!file.startsWith(prefix)) continue;
      const [head, ...rest] = file.slice(prefix.length).split('/');
      if (!head) continue;
      const entryPath = `${prefix}${head}`;
      entries.set(
        entryPath,
        rest.length > 0
          ? { path: entryPath, type: 'directory', size: 0 }
          : { path: entryPath, type: 'file', size: Buffer.byteLength(content) },
      );
    }
    return Promise.resolve([...entries.values()].sort((a, b) => a.path.localeCompare(b.path)));
  }

  read(path: string, options: ReadOptions = {}): Promise<string> {
    const content = this.files.get(normalize(path));
    if (content === undefined)
      return Promise.reject(
        Object.assign(new Error(`no such file: ${path}`), { code: 'NOT_FOUND' }),
      );
    if (options.offset === undefined && options.limit === undefined)
      return Promise.resolve(content);
    const lines = content.split('\n');
    const start = options.offset ?? 0;
    return Promise.resolve(
      lines
        .slice(start, options.limit === undefined ? undefined : start + options.limit)
        .join('\n'),
    );
  }

  write(path: string, content: string): Promise<void> {
    this.files.set(normalize(path), content);
    return Promise.resolve();
  }

  async edit(path: string, oldText: string, newText: string): Promise<void> {
    const content = await this.read(path);
    const count = content.split(oldText).length - 1;
    if (count !== 1) throw new Error(`expected exactly one occurrence of the text, found ${count}`);
    this.files.set(
      normalize(path),
      content.replace(oldText, () => newText),
    );
  }

  glob(pattern: string, path?: string): Promise<string[]> {
    const base = normalize(path);
    const match = picomatch(pattern, { dot: true });
    return Promise.resolve(
      [...this.files.keys()]
        .filter((file) => base === '' || file.startsWith(`${base}/`))
        .filter((file) => match(base === '' ? file : file.slice(base.length + 1)))
        .sort(),
    );
  }

  grep(
    pattern: string,
    options: { path?: string; glob?: string; maxMatches?: number } = {},
  ): Promise<GrepMatch[]> {
    const regex = new RegExp(pattern);
    const base = normalize(options.path);
    const match = options.glob ? picomatch(options.glob, { dot: true }) : () => true;
    const out: GrepMatch[] = [];
    for (const [file, content] of [...this.files].sort(([a], [b]) => a.localeCompare(b))) {
      if (base !== '' && file !== base && !file.startsWith(`${base}/`)) continue;
      if (!match(file)) continue;
      content.split('\n').forEach((text, index) => {
        if (regex.test(text) && out.length < (options.maxMatches ?? Infinity))
          out.push({ path: file, line: index + 1, text });
      });
    }
    return Promise.resolve(out);
  }

  delete(path: string): Promise<void> {
    const target = normalize(path);
    for (const file of [...this.files.keys()]) {
      if (file === target || file.startsWith(`${target}/`)) this.files.delete(file);
    }
    return Promise.resolve();
  }

  terminate(): Promise<void> {
    this.terminated = true;
    return Promise.resolve();
  }
}

/** A command handler that runs until aborted (for abort tests), then reports exit code 130. */
export function hangingCommand(onStart?: () => void): FakeCommandHandler {
  return (_command, options) =>
    new Promise((resolve) => {
      onStart?.();
      const finish = () =>
        resolve({ output: 'killed', exitCode: 130, truncated: false, timedOut: false });
      if (options.signal?.aborted) return finish();
      options.signal?.addEventListener('abort', finish, { once: true });
    });
}

/** One FakeExecutionBackend per session, created on demand and kept until `release`. */
export class FakeExecutionBackendFactory implements ExecutionBackendFactory {
  readonly kind = 'local' as const;
  readonly backends = new Map<string, FakeExecutionBackend>();
  readonly released: string[] = [];

  constructor(private readonly onExecute?: FakeCommandHandler) {}

  forSession(sessionId: string, root: string): Promise<ExecutionBackend> {
    let backend = this.backends.get(sessionId);
    if (!backend) {
      backend = new FakeExecutionBackend(root, this.onExecute);
      this.backends.set(sessionId, backend);
    }
    return Promise.resolve(backend);
  }

  async release(sessionId: string): Promise<void> {
    await this.backends.get(sessionId)?.terminate();
    this.backends.delete(sessionId);
    this.released.push(sessionId);
  }

  /** Every `reapOrphans` call, in order (a fake runs nothing that could be left over). */
  readonly reaped: OrphanTarget[] = [];

  reapOrphans(target: OrphanTarget): Promise<OrphanReport> {
    this.reaped.push(target);
    return Promise.resolve({ killed: 0, ended: 0, unreachable: 0 });
  }
}
