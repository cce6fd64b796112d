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
  ExecutionBackendFactory,
  SandboxProcess,
  SpawnOptions,
} from './port';
import { LiveSessions, SessionBackend } from './session-backend';

/** A standard system PATH, used when the server passes none. */
export const DEFAULT_LOCAL_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * How long to wait for a command's output pipes to close once it exited and its process group
 * was killed; only a process that left the group (setsid) can hold them longer.
 */
const PIPE_CLOSE_GRACE_MS = 500;

/** How much of a spawned process's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 4096;

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
  const sessions = new LiveSessions();
  return {
    kind: 'local',
    async forSession(sessionId, root) {
      validateSessionId(sessionId);
      await fs.mkdir(root, { recursive: true });
      const guard = await PathGuard.create({ root, protectedPaths: common.protectedPaths });
      return sessions.track(
        sessionId,
        new LocalExecutionBackend(guard, common, {
          PATH: path,
          HOME: config.home ?? guard.root,
          COGNITION_WORKSPACE: guard.root,
        }),
      );
    },
    release(sessionId) {
      return sessions.terminate(sessionId);
    },
  };
}

class LocalExecutionBackend extends SessionBackend {
  readonly kind = 'local' as const;
  /** Process group ids of running commands, killed by `terminate`. */
  private readonly running = new Set<number>();

  constructor(
    guard: PathGuard,
    private readonly config: ResolvedCommonConfig,
    private readonly baseEnv: Readonly<Record<string, string>>,
  ) {
    super(guard);
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

  async spawn(
    program: string,
    args: readonly string[],
    options: SpawnOptions = {},
  ): Promise<SandboxProcess> {
    this.assertLive();
    if (program.trim() === '' || program.includes('\0') || args.some((a) => a.includes('\0'))) {
      throw new SandboxError('INVALID_COMMAND', 'program must be a non-empty string without NUL');
    }
    const env = { ...this.baseEnv, ...validateEnv(options.env) };
    const cwd = (await this.files.existingDirectory(options.cwd ?? '.', 'cwd')).absolute;
    // detached: its own process group, so kill() and terminate() reach whatever it started.
    const child = spawn(program, [...args], {
      cwd,
      env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error: NodeJS.ErrnoException) => {
        const reason =
          error.code === 'ENOENT' ? 'command not found' : (error.code ?? error.message);
        reject(new SandboxError('INVALID_COMMAND', `${program}: ${reason}`));
      });
    });
    const group = child.pid;
    if (group !== undefined) this.running.add(group);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    const exited = new Promise<number>((resolve) => {
      child.once('exit', (code, signal) => {
        if (group !== undefined) {
          killGroup(group, 'SIGKILL');
          this.running.delete(group);
        }
        resolve(code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : -1));
      });
    });
    let killing = false;
    return {
      stdin: child.stdin,
      stdout: child.stdout,
      stderrTail: () => stderr,
      exited,
      kill: () => {
        if (killing || group === undefined) return;
        killing = true;
        killGroup(group, 'SIGTERM');
        const timer = setTimeout(() => killGroup(group, 'SIGKILL'), this.config.killGraceMs);
        timer.unref();
        void exited.then(() => clearTimeout(timer));
      },
    };
  }

  protected release(): Promise<void> {
    for (const group of this.running) killGroup(group, 'SIGKILL');
    this.running.clear();
    return Promise.resolve();
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
