import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { constants as osConstants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import {
  assertSpawnable,
  LiveSessions,
  OutputCollector,
  parseCommand,
  PathGuard,
  positiveInteger,
  resolveCommonConfig,
  SandboxError,
  SessionBackend,
  validateEnv,
  validateRunId,
  validateSessionId,
} from '@cognition/sandbox';
import type {
  CommonSandboxConfig,
  ExecuteOptions,
  ExecuteResult,
  ExecutionBackendFactory,
  ResolvedCommonConfig,
  SandboxProcess,
  SpawnOptions,
} from '@cognition/sandbox';
import os from 'node:os';
import type { ExecRecord } from './exec-records';
import { bootId, defaultStateDir, ExecRecords, processStartTime } from './exec-records';

/** A standard system PATH, used when the server passes none. */
export const DEFAULT_LOCAL_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * How long to wait for a command's output pipes to close once it exited and its process group
 * was killed; only a process that left the group (setsid) can hold them longer.
 */
const PIPE_CLOSE_GRACE_MS = 500;

/** How much of a spawned process's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 4096;

/**
 * Every command starts as `/bin/sh -c GATE program args...`: the shell waits on fd 3 until the
 * backend has recorded the process group (pid and start time are only known once the process
 * exists), then closes fd 3 and execs the program in place (same pid, same group, same start
 * time). A server that dies before recording it closes the pipe: `read` fails and the command
 * never runs. So no command runs unrecorded, and `reapOrphans` can find every one.
 */
const GATE = 'read -r go <&3 && [ "$go" = run ] || exit 125; exec 3<&-; exec "$0" "$@"';

export interface LocalSandboxConfig extends CommonSandboxConfig {
  /** PATH given to commands (default `DEFAULT_LOCAL_PATH`); the server may pass its own. */
  path?: string;
  /** HOME given to commands (default: the session root). */
  home?: string;
  /**
   * Where each running command is recorded (one small file per command, removed when it ends)
   * so that `reapOrphans` finds what a crashed server left running. Every server that may
   * take over another's runs on this machine must use the same directory (the server uses
   * `<COGNITION_WORKSPACE_ROOT>/.cognition/sandbox`). Default: `<tmpdir>/cognition-sandbox-<uid>`.
   */
  stateDir?: string;
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
  const records = new ExecRecords(config.stateDir ?? defaultStateDir());
  return {
    kind: 'local',
    async forSession(sessionId, root, options = {}) {
      validateSessionId(sessionId);
      const runId = validateRunId(options.runId) ?? null;
      await fs.mkdir(root, { recursive: true });
      const guard = await PathGuard.create({ root, protectedPaths: common.protectedPaths });
      return sessions.track(
        sessionId,
        new LocalExecutionBackend(
          guard,
          common,
          {
            PATH: path,
            HOME: config.home ?? guard.root,
            COGNITION_WORKSPACE: guard.root,
          },
          { records, sessionId, runId },
        ),
      );
    },
    release(sessionId) {
      return sessions.terminate(sessionId);
    },
    async reapOrphans(target) {
      validateSessionId(target.sessionId);
      validateRunId(target.runId);
      return records.reap(target);
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
    private readonly recording: {
      records: ExecRecords;
      sessionId: string;
      runId: string | null;
    },
  ) {
    super(guard);
  }

  /** Records the process group `pgid` (see `ExecRecords`); resolves to the record's file. */
  private record(pgid: number, kind: ExecRecord['kind'], command: string): Promise<string> {
    const { records, sessionId, runId } = this.recording;
    return records.write({
      sessionId,
      runId,
      pgid,
      startTime: processStartTime(pgid) ?? '',
      bootId: bootId(),
      hostname: os.hostname(),
      ownerPid: process.pid,
      kind,
      command: command.slice(0, 200),
      startedAt: new Date().toISOString(),
    });
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
    return this.run(program, args, { command, cwd, env, timeoutMs, signal: options.signal });
  }

  async spawn(
    program: string,
    args: readonly string[],
    options: SpawnOptions = {},
  ): Promise<SandboxProcess> {
    this.assertLive();
    assertSpawnable(program, args);
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
    // Recorded once started (a crash in between leaves it unrecorded; an MCP server exits anyway
    // when the dead server's end of its stdin closes).
    const recorded =
      group === undefined
        ? Promise.resolve(undefined)
        : this.record(group, 'spawn', [program, ...args].join(' ')).catch(() => undefined);
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
        const exitCode = code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : -1);
        void recorded
          .then((file) => (file === undefined ? undefined : this.recording.records.remove(file)))
          .catch(() => undefined)
          .finally(() => resolve(exitCode));
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
    options: {
      command: string;
      cwd: string;
      env: Record<string, string>;
      timeoutMs: number;
      signal?: AbortSignal;
    },
  ): Promise<ExecuteResult> {
    return new Promise<ExecuteResult>((resolve) => {
      const output = new OutputCollector();
      let timedOut = false;
      let settled = false;
      let exitCode = -1;
      const timers: NodeJS.Timeout[] = [];

      let refused = false;
      // detached: the child leads its own process group, so the whole tree can be signalled.
      const child = spawn('/bin/sh', ['-c', GATE, program, ...args], {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      });
      const group = child.pid;
      if (group !== undefined) this.running.add(group);
      // Piped above, so present (the typings cannot tell with a fourth stdio entry).
      const stdout = child.stdio[1] as Readable;
      const stderr = child.stdio[2] as Readable;
      const gate = child.stdio[3] as Writable | null;
      // EPIPE when the command was stopped before its go-ahead: nothing to report.
      gate?.on('error', () => undefined);
      const recorded: Promise<string | undefined> =
        group === undefined
          ? Promise.resolve(undefined)
          : this.record(group, 'execute', options.command).then(
              (file) => {
                gate?.end('run\n');
                return file;
              },
              (error: unknown) => {
                // Not recorded, so not run: a crash now would leave it unfindable.
                refused = true;
                const reason = error instanceof Error ? error.message : String(error);
                output.push(
                  Buffer.from(`${program}: not run, it could not be recorded: ${reason}\n`),
                );
                gate?.destroy();
                return undefined;
              },
            );

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
        // The record goes once the group is dead (killed at exit), before the caller hears.
        void recorded
          .then((file) => (file === undefined ? undefined : this.recording.records.remove(file)))
          .catch(() => undefined)
          .finally(() =>
            resolve({
              output: output.text(),
              exitCode: refused ? 126 : exitCode,
              truncated: output.truncated,
              timedOut,
            }),
          );
      };

      stdout.on('data', (chunk: Buffer) => output.push(chunk));
      stderr.on('data', (chunk: Buffer) => output.push(chunk));
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
        gate?.destroy();
        timers.push(
          setTimeout(() => {
            stdout.destroy();
            stderr.destroy();
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
