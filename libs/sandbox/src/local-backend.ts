import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { parseCommand } from './command';
import type { CommonSandboxConfig, ResolvedCommonConfig } from './config';
import { positiveInteger, resolveCommonConfig, validateEnv, validateSessionId } from './config';
import { SandboxError } from './errors';
import { OutputCollector } from './output';
import { PathGuard } from './paths';
import type {
  ExecuteOptions,
  ExecuteResult,
  ExecutionBackend,
  ExecutionBackendFactory,
  FileEntry,
  GrepMatch,
  ReadOptions,
} from './port';
import { WorkspaceFiles } from './workspace-files';

/** A standard system PATH, used when the server passes none. */
export const DEFAULT_LOCAL_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * How long to wait for a command's output pipes to close once it exited and its process group
 * was killed; only a process that left the group (setsid) can hold them longer.
 */
const PIPE_CLOSE_GRACE_MS = 500;

export interface LocalSandboxConfig extends CommonSandboxConfig {
  /** PATH given to commands (default `DEFAULT_LOCAL_PATH`); the server may pass its own. */
  path?: string;
  /** HOME given to commands (default: the session root). */
  home?: string;
}

/**
 * Runs commands on the server's own machine, as the server's user. This is NOT isolation: a
 * command can read and write whatever that user can, use the network and see other processes.
 * What it does guarantee: no shell (so no injection through metacharacters), an allowlisted
 * environment (the server's secrets are not inherited), a process group per command that is
 * killed as a whole on timeout/abort, and confined, protected-path-aware file operations.
 */
export function createLocalSandbox(config: LocalSandboxConfig = {}): ExecutionBackendFactory {
  const common = resolveCommonConfig(config, 'local');
  const path = config.path ?? DEFAULT_LOCAL_PATH;
  const sessions = new Map<string, Set<LocalExecutionBackend>>();
  return {
    kind: 'local',
    async forSession(sessionId, root) {
      validateSessionId(sessionId);
      await fs.mkdir(root, { recursive: true });
      const guard = await PathGuard.create({ root, protectedPaths: common.protectedPaths });
      const backend = new LocalExecutionBackend(guard, common, {
        PATH: path,
        HOME: config.home ?? guard.root,
        COGNITION_WORKSPACE: guard.root,
      });
      const live = sessions.get(sessionId) ?? new Set();
      live.add(backend);
      sessions.set(sessionId, live);
      backend.onTerminate(() => live.delete(backend));
      return backend;
    },
    async release(sessionId) {
      const live = sessions.get(sessionId);
      sessions.delete(sessionId);
      await Promise.all([...(live ?? [])].map((backend) => backend.terminate()));
    },
  };
}

class LocalExecutionBackend implements ExecutionBackend {
  readonly kind = 'local' as const;
  readonly root: string;
  private readonly files: WorkspaceFiles;
  /** Process group ids of running commands, killed by `terminate`. */
  private readonly running = new Set<number>();
  private terminated = false;
  private readonly terminateListeners: Array<() => void> = [];

  constructor(
    guard: PathGuard,
    private readonly config: ResolvedCommonConfig,
    private readonly baseEnv: Readonly<Record<string, string>>,
  ) {
    this.root = guard.root;
    this.files = new WorkspaceFiles(guard);
  }

  onTerminate(listener: () => void): void {
    this.terminateListeners.push(listener);
  }

  async execute(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    this.assertLive();
    const timeoutMs = positiveInteger(options.timeoutMs, 'timeoutMs') ?? this.config.timeoutMs;
    const env = { ...this.baseEnv, ...validateEnv(options.env) };
    const argv = parseCommand(command, env);
    const cwd = (await this.files.existingDirectory(options.cwd ?? '.', 'cwd')).absolute;
    if (options.signal?.aborted) {
      throw new SandboxError('ABORTED', 'The command was aborted before it started');
    }
    const [program = '', ...args] = argv;
    return this.run(program, args, { cwd, env, timeoutMs, signal: options.signal });
  }

  ls(path?: string): Promise<FileEntry[]> {
    return this.live(() => this.files.ls(path));
  }

  read(path: string, options?: ReadOptions): Promise<string> {
    return this.live(() => this.files.read(path, options));
  }

  write(path: string, content: string): Promise<void> {
    return this.live(() => this.files.write(path, content));
  }

  edit(path: string, oldText: string, newText: string): Promise<void> {
    return this.live(() => this.files.edit(path, oldText, newText));
  }

  glob(pattern: string, path?: string): Promise<string[]> {
    return this.live(() => this.files.glob(pattern, path));
  }

  grep(
    pattern: string,
    options?: { path?: string; glob?: string; maxMatches?: number },
  ): Promise<GrepMatch[]> {
    return this.live(() => this.files.grep(pattern, options));
  }

  delete(path: string): Promise<void> {
    return this.live(() => this.files.delete(path));
  }

  terminate(): Promise<void> {
    if (this.terminated) return Promise.resolve();
    this.terminated = true;
    for (const group of this.running) killGroup(group, 'SIGKILL');
    this.running.clear();
    for (const listener of this.terminateListeners.splice(0)) listener();
    return Promise.resolve();
  }

  private assertLive(): void {
    if (this.terminated) {
      throw new SandboxError('TERMINATED', 'This sandbox session was terminated');
    }
  }

  /** Runs `operation` unless terminated; every failure surfaces as a rejection. */
  private async live<T>(operation: () => Promise<T>): Promise<T> {
    this.assertLive();
    return operation();
  }

  private run(
    program: string,
    args: string[],
    options: { cwd: string; env: Record<string, string>; timeoutMs: number; signal?: AbortSignal },
  ): Promise<ExecuteResult> {
    return new Promise<ExecuteResult>((resolve) => {
      const output = new OutputCollector();
      let timedOut = false;
      let settled = false;
      let exitCode = -1;
      const timers: NodeJS.Timeout[] = [];

      // detached: the child leads its own process group, so the whole tree can be signalled.
      const child = spawn(program, args, {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const group = child.pid;
      if (group !== undefined) this.running.add(group);

      const stop = (): void => {
        if (group === undefined) return;
        killGroup(group, 'SIGTERM');
        timers.push(setTimeout(() => killGroup(group, 'SIGKILL'), this.config.killGraceMs));
      };
      const onAbort = (): void => stop();
      const finish = (): void => {
        if (settled) return;
        settled = true;
        for (const timer of timers) clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (group !== undefined) this.running.delete(group);
        resolve({ output: output.text(), exitCode, truncated: output.truncated, timedOut });
      };

      child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
      child.on('error', (error: NodeJS.ErrnoException) => {
        // Spawning failed; answer like a shell would, so the model can correct the command.
        exitCode = error.code === 'ENOENT' ? 127 : 126;
        const reason =
          error.code === 'ENOENT' ? 'command not found' : (error.code ?? error.message);
        output.push(Buffer.from(`${program}: ${reason}\n`));
        finish();
      });
      child.on('exit', (code, signal) => {
        if (settled) return;
        exitCode = code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : -1);
        // Whatever the command left running in its group dies with it.
        if (group !== undefined) killGroup(group, 'SIGKILL');
        timers.push(
          setTimeout(() => {
            child.stdout.destroy();
            child.stderr.destroy();
            finish();
          }, PIPE_CLOSE_GRACE_MS),
        );
      });
      child.on('close', finish);

      timers.push(
        setTimeout(() => {
          timedOut = true;
          stop();
        }, options.timeoutMs),
      );
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

function killGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}
