import {
  assertSpawnable,
  OutputCollector,
  positiveInteger,
  SandboxError,
  SessionBackend,
  validateEnv,
} from '@cognition/sandbox';
import type {
  ExecuteOptions,
  ExecuteResult,
  PathGuard,
  SandboxProcess,
  SpawnOptions,
} from '@cognition/sandbox';
import type Docker from 'dockerode';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { ResolvedDockerConfig } from '../docker-config';
import { ROOT_LABEL, sessionContainerOptions } from '../docker-config';
import { dockerStatus } from '../engine/connection';
import { DockerStreamDemuxer } from '../engine/demux';
import type { DockerApi } from '../engine/docker-api';
import { toDockerError } from '../engine/docker-api';
import { dockerProcess } from './docker-process';
import { EXEC_WRAPPER, pidFilePath, SIGNAL_SCRIPT, SPAWN_WRAPPER } from './exec-records';

/**
 * After SIGKILL, how long to wait for the exec's stream to end before restarting the container
 * (the last resort: the group could not be signalled, or a process that left it holds the
 * stream open).
 */
const STREAM_END_GRACE_MS = 3_000;

/** Attempts at getting a signal exec into a container whose pids may be exhausted. */
export const SIGNAL_ATTEMPTS = 10;
export const SIGNAL_RETRY_MS = 100;

export class DockerExecutionBackend extends SessionBackend {
  readonly kind = 'docker' as const;
  private container: Promise<Docker.Container> | undefined;
  private restarting: Promise<void> = Promise.resolve();
  private readonly stops = new Set<() => void>();

  constructor(
    private readonly api: DockerApi,
    private readonly config: ResolvedDockerConfig,
    private readonly sessionId: string,
    private readonly name: string,
    private readonly guard: PathGuard,
    /** The run every command is recorded under (see exec-records.ts). */
    private readonly runId: string | null = null,
  ) {
    super(guard, config.owner);
  }

  async execute(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    this.assertLive();
    if (typeof command !== 'string' || command.trim() === '' || command.includes('\0')) {
      throw new SandboxError(
        'INVALID_COMMAND',
        'command must be a non-empty string without NUL characters',
      );
    }
    const timeoutMs = positiveInteger(options.timeoutMs, 'timeoutMs') ?? this.config.timeoutMs;
    const env = validateEnv(options.env);
    const cwd = await this.files.existingDirectory(options.cwd ?? '.', 'cwd');
    if (options.signal?.aborted) {
      throw new SandboxError('ABORTED', 'The command was aborted before it started');
    }
    const workingDir = path.posix.join(this.config.workspacePath, cwd.relative);
    const exec = await this.createExec(command, workingDir, env);
    return this.runExec(exec.exec, exec.pidFile, timeoutMs, options.signal);
  }

  /**
   * Starts `program` in the session's container (same user, capabilities and limits as
   * `execute`) with its stdio attached over a `docker exec`, recorded like a command so a
   * recovering server reaps it. Used by MCP stdio servers.
   */
  async spawn(
    program: string,
    args: readonly string[],
    options: SpawnOptions = {},
  ): Promise<SandboxProcess> {
    this.assertLive();
    assertSpawnable(program, args);
    const env = validateEnv(options.env);
    const cwd = await this.files.existingDirectory(options.cwd ?? '.', 'cwd');
    const workingDir = path.posix.join(this.config.workspacePath, cwd.relative);
    const { exec, pidFile } = await this.createExec({ spawn: [program, ...args] }, workingDir, env);
    const stream = await this.api
      .startExec(exec, true)
      .catch((error: unknown) => Promise.reject(toDockerError(error, `start ${program}`)));
    let ended = false;
    let timers: NodeJS.Timeout[] = [];
    const stop = (): void => {
      if (ended || timers.length > 0) return;
      timers = this.stopSequence(
        pidFile,
        () => !ended,
        () => stream.destroy(),
      );
    };
    this.stops.add(stop);
    const child = dockerProcess(stream, () => this.api.exitCode(exec), stop);
    void child.exited.then(() => {
      ended = true;
      for (const timer of timers) clearTimeout(timer);
      this.stops.delete(stop);
    });
    return child;
  }

  /** `INVALID_COMMAND` unless `program` is found (in the PATH or the working directory). */
  private async assertProgram(
    container: Docker.Container,
    program: string,
    workingDir: string,
    env: string[],
  ): Promise<void> {
    const found = await this.api
      .runCollect(container, ['sh', '-c', 'command -v "$1"', 'cognition-which', program], {
        WorkingDir: workingDir,
        Env: env,
      })
      .catch((error: unknown) => Promise.reject(toDockerError(error, `look up ${program}`)));
    if (found.exitCode !== 0) {
      throw new SandboxError('INVALID_COMMAND', `${program}: command not found`);
    }
  }

  /** Removes the session's container (running commands die with it). */
  protected async release(): Promise<void> {
    const hadContainer = this.container !== undefined;
    this.container = undefined;
    for (const stop of this.stops) stop();
    if (hadContainer) await this.api.remove(this.name);
  }

  /**
   * Creates the exec of `command` (a shell command line) or, with `spawn`, of a program and its
   * arguments with stdin attached; (re)creates the container once if it vanished meanwhile.
   */
  private async createExec(
    command: string | { spawn: readonly string[] },
    workingDir: string,
    env: Record<string, string>,
  ): Promise<{ exec: Docker.Exec; pidFile: string }> {
    const pidFile = pidFilePath(this.runId);
    const spawned = typeof command !== 'string';
    const create = async (): Promise<Docker.Exec> => {
      await this.restarting;
      const container = await this.ensureContainer();
      const Env = Object.entries(env).map(([key, value]) => `${key}=${value}`);
      if (spawned) await this.assertProgram(container, command.spawn[0] ?? '', workingDir, Env);
      return this.api.exec(container, {
        Cmd: spawned
          ? ['sh', '-c', SPAWN_WRAPPER, 'cognition-spawn', pidFile, ...command.spawn]
          : ['sh', '-c', EXEC_WRAPPER, 'cognition-exec', pidFile, command],
        AttachStdin: spawned,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        WorkingDir: workingDir,
        Env,
      });
    };
    try {
      return { exec: await create(), pidFile };
    } catch (error) {
      if (error instanceof SandboxError) throw error;
      const status = dockerStatus(error);
      if (status !== 404 && status !== 409) throw toDockerError(error, 'start a command');
      this.container = undefined;
      try {
        return { exec: await create(), pidFile };
      } catch (retryError) {
        throw toDockerError(retryError, 'start a command');
      }
    }
  }

  private runExec(
    exec: Docker.Exec,
    pidFile: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<ExecuteResult> {
    return new Promise<ExecuteResult>((resolve, reject) => {
      const output = new OutputCollector();
      const demuxer = new DockerStreamDemuxer((payload) => output.push(payload));
      let timedOut = false;
      let stopping = false;
      let settled = false;
      let stream: Duplex | undefined;
      const timers: NodeJS.Timeout[] = [];

      const stop = (): void => {
        if (stopping) return;
        stopping = true;
        timers.push(
          ...this.stopSequence(
            pidFile,
            () => !settled,
            () => stream?.destroy(),
          ),
        );
      };
      const onAbort = (): void => stop();
      const cleanup = (): void => {
        settled = true;
        for (const timer of timers) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.stops.delete(stop);
      };
      const finish = (): void => {
        if (settled) return;
        cleanup();
        // The hijacked socket is half-open after 'end'; close our side too.
        stream?.destroy();
        this.api
          .exitCode(exec)
          .catch(() => -1)
          .then((exitCode) => {
            resolve({ output: output.text(), exitCode, truncated: output.truncated, timedOut });
          }, reject);
      };

      this.stops.add(stop);
      timers.push(
        setTimeout(() => {
          timedOut = true;
          stop();
        }, timeoutMs),
      );
      signal?.addEventListener('abort', onAbort, { once: true });

      this.api
        .startExec(exec)
        .then((started) => {
          stream = started;
          if (settled) {
            started.destroy();
            return;
          }
          started.on('data', (chunk: Buffer) => demuxer.push(chunk));
          started.on('end', finish);
          started.on('close', finish);
          started.on('error', finish);
        })
        .catch((error: unknown) => {
          if (settled) return;
          cleanup();
          reject(toDockerError(error, 'start a command'));
        });
    });
  }

  /**
   * TERM to a command's group, KILL after the grace, and if its stream still has not ended,
   * restart the container (workspace and container survive; /tmp and other commands of the
   * session do not). Each step runs only while `pending()`; the timers are returned.
   */
  private stopSequence(
    pidFile: string,
    pending: () => boolean,
    destroyStream: () => void,
  ): NodeJS.Timeout[] {
    const later = (ms: number, step: () => Promise<unknown>): NodeJS.Timeout =>
      setTimeout(() => {
        if (pending()) step().catch(() => undefined);
      }, ms);
    return [
      later(0, () => this.signalGroup(pidFile, 'TERM', pending)),
      later(this.config.killGraceMs, () => this.signalGroup(pidFile, 'KILL', pending)),
      later(this.config.killGraceMs + STREAM_END_GRACE_MS, async () => {
        await this.restartContainer();
        destroyStream();
      }),
    ];
  }

  /** Signals a command's process group from another exec; false if it never got in. */
  private async signalGroup(
    pidFile: string,
    signalName: 'TERM' | 'KILL',
    pending: () => boolean,
  ): Promise<boolean> {
    for (let attempt = 0; attempt < SIGNAL_ATTEMPTS && pending(); attempt += 1) {
      const container = await this.container;
      if (container === undefined) return false;
      const exitCode = await this.api
        .runQuiet(container, ['sh', '-c', SIGNAL_SCRIPT, 'cognition-signal', pidFile, signalName])
        .catch(() => -1);
      if (exitCode === 0) return true;
      await new Promise((resolve) => setTimeout(resolve, SIGNAL_RETRY_MS));
    }
    return false;
  }

  /**
   * Kills every process of the container by restarting it (same container, same mounts). New
   * commands wait for the restart to finish.
   */
  private async restartContainer(): Promise<void> {
    const container = await this.container;
    if (container === undefined) return;
    const restarting = this.api.restart(container);
    this.restarting = restarting.catch(() => undefined);
    await restarting;
  }

  private ensureContainer(): Promise<Docker.Container> {
    this.container ??= this.startContainer().catch((error: unknown) => {
      this.container = undefined;
      throw error;
    });
    return this.container;
  }

  private async startContainer(): Promise<Docker.Container> {
    const hostRoot = this.config.hostPathOf(this.root);
    await this.prepareWorkspace();
    const existing = this.api.container(this.name);
    let info = await this.api.inspect(existing);
    if (info && info.Config.Labels[ROOT_LABEL] !== hostRoot) {
      // Same session, different workspace directory: the old mount is stale.
      await this.api.remove(this.name);
      info = undefined;
    }
    if (info) {
      if (!info.State.Running) await this.api.start(existing);
      return existing;
    }
    const created = await this.create(hostRoot).catch((error: unknown) => {
      // 409: another backend of the same session created it first.
      if (dockerStatus(error) !== 409) throw error;
      return existing;
    });
    await this.api.start(created);
    return created;
  }

  private async create(hostRoot: string): Promise<Docker.Container> {
    const config = this.config;
    const mounts: Docker.MountSettings[] = [
      { Type: 'bind', Source: hostRoot, Target: config.workspacePath, ReadOnly: false },
    ];
    // Protected paths that exist are mounted read-only over the workspace: commands cannot
    // write them either, whatever their ownership.
    for (const protectedPath of config.protectedPaths) {
      const resolved = await this.guard.resolve(protectedPath).catch(() => undefined);
      if (resolved?.exists) {
        mounts.push({
          Type: 'bind',
          Source: this.config.hostPathOf(resolved.absolute),
          Target: path.posix.join(config.workspacePath, resolved.relative),
          ReadOnly: true,
        });
      }
    }
    return this.api.create(
      sessionContainerOptions(config, {
        name: this.name,
        sessionId: this.sessionId,
        hostRoot,
        mounts,
      }),
    );
  }

  /** Makes the workspace writable for the container user (only when running as root). */
  private async prepareWorkspace(): Promise<void> {
    const owner = this.config.owner;
    if (!owner) return;
    const protectedRoots = new Set<string>();
    for (const protectedPath of this.config.protectedPaths) {
      const resolved = await this.guard.resolve(protectedPath).catch(() => undefined);
      if (resolved) protectedRoots.add(resolved.absolute);
    }
    const visit = async (absolute: string): Promise<void> => {
      if (protectedRoots.has(absolute)) return;
      await fs.lchown(absolute, owner.uid, owner.gid);
      const stat = await fs.lstat(absolute);
      if (!stat.isDirectory()) return;
      for (const name of await fs.readdir(absolute)) await visit(path.join(absolute, name));
    };
    await visit(this.root);
  }
}
