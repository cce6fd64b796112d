import { CircuitBreaker, isCircuitOpenError } from '@cognition/circuit-breaker';
import type { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { CommonSandboxConfig, ResolvedCommonConfig } from '../config';
import { positiveInteger, resolveCommonConfig, validateEnv, validateSessionId } from '../config';
import { SandboxError } from '../errors';
import { OutputCollector } from '../output';
import { PathGuard } from '../paths';
import type { ExecuteOptions, ExecuteResult, ExecutionBackendFactory } from '../port';
import type { FileOwner } from '../workspace-files';
import { LiveSessions, SessionBackend } from '../session-backend';
import type { DockerConnection } from './connection';
import {
  createDockerClient,
  DEFAULT_DOCKER_SOCKET,
  dockerStatus,
  isDockerEngineFailure,
  unavailable,
} from './connection';
import { DockerStreamDemuxer } from './demux';

/** Labels that mark the containers this library manages (found again after a restart). */
export const MANAGED_LABEL = 'cognition.managed';
export const SESSION_LABEL = 'cognition.session';
const ROOT_LABEL = 'cognition.root';

export const DOCKER_DEFAULTS = {
  image: 'cognition-sandbox:latest',
  network: 'none',
  memory: '512m',
  cpus: 1.0,
  pidsLimit: 256,
  workspacePath: '/workspace',
  containerPrefix: 'cognition-',
  tmpSize: '256m',
  homeSize: '64m',
  breakerName: 'docker',
} as const;

/**
 * After SIGKILL, how long to wait for the exec's stream to end before restarting the container
 * (the last resort: the group could not be signalled, or a process that left it holds the
 * stream open).
 */
const STREAM_END_GRACE_MS = 3_000;

/**
 * Runs inside the container as `sh -c WRAPPER cognition-exec <pidfile> <command>`. The command
 * gets its own session (setsid), so its whole process group can be signalled by a later exec
 * (`kill -SIG -<pgid>`, pgid read from the pid file) while the wrapper survives to report the
 * exit status; when the command ends, whatever it left in its group is killed too, so nothing
 * keeps the output stream open.
 */
const EXEC_WRAPPER =
  'setsid sh -c "$2" & c=$!; echo "$c" > "$1"; wait "$c"; s=$?; ' +
  'kill -KILL -"$c" 2>/dev/null; rm -f "$1"; exit "$s"';

/**
 * Sends signal `$2` to the process group whose id is in the pid file `$1`. Shell builtins only
 * (`[`, `read`, `kill`): it must work while a fork bomb holds every pid the container may have.
 * Exit 3: no pid file (not written yet, or the wrapper already removed it: the group is gone).
 */
const SIGNAL_SCRIPT =
  '[ -s "$1" ] || exit 3; read -r p < "$1" || exit 3; kill -"$2" -"$p" 2>/dev/null; exit 0';

/** Attempts at getting a signal exec into a container whose pids may be exhausted. */
const SIGNAL_ATTEMPTS = 10;
const SIGNAL_RETRY_MS = 100;

export interface DockerSandboxConfig extends CommonSandboxConfig {
  /** Where the engine is (default: the socket /var/run/docker.sock). */
  connection?: DockerConnection;
  /** `COGNITION_DOCKER_IMAGE`, default `cognition-sandbox:latest`. */
  image?: string;
  /** `COGNITION_DOCKER_NETWORK`, default `none` (no network at all). */
  network?: string;
  /** `COGNITION_DOCKER_MEMORY_LIMIT`, e.g. `512m` (default); swap is not added on top. */
  memory?: string;
  /** `COGNITION_DOCKER_CPU_LIMIT`, default 1.0. */
  cpus?: number;
  /** Maximum number of processes in a container (contains fork bombs). Default 256. */
  pidsLimit?: number;
  /**
   * `uid:gid` the commands run as. Default: the server's own uid:gid when it is not root, else
   * `1000:1000` (and the workspace is chowned to it so the container can write it). Never root.
   */
  user?: string;
  /** Size of the tmpfs mounted at /tmp (default 256m) and /home (default 64m). */
  tmpSize?: string;
  homeSize?: string;
  /** Where the workspace is mounted in the container (and the commands' default cwd). */
  workspacePath?: string;
  /** Container name prefix; names are `<prefix><sessionId>`. Default `cognition-`. */
  containerPrefix?: string;
  /**
   * Maps a session root to the path the ENGINE sees (when the server itself runs in a container
   * with the docker socket mounted). Default: the same path.
   */
  hostPathOf?: (root: string) => string;
  /**
   * Registry holding the breaker (`docker`) around every Docker API call, e.g. the server's, so
   * /health reports it. Default: a breaker private to this factory.
   */
  circuitBreakers?: CircuitBreakerRegistry;
}

interface ResolvedDockerConfig extends ResolvedCommonConfig {
  connection: DockerConnection;
  image: string;
  network: string;
  memoryBytes: number;
  nanoCpus: number;
  pidsLimit: number;
  user: string;
  owner: FileOwner | undefined;
  tmpSize: string;
  homeSize: string;
  workspacePath: string;
  containerPrefix: string;
  hostPathOf: (root: string) => string;
}

/** The docker factory, plus housekeeping the server calls. */
export interface DockerSandboxFactory extends ExecutionBackendFactory {
  readonly kind: 'docker';
  /**
   * Removes the managed containers (label `cognition.managed=true`, named with this factory's
   * prefix) of sessions that are not in `existingSessionIds`; call it at startup. Resolves to
   * the session ids whose container was removed.
   */
  reconcile(existingSessionIds: Iterable<string>): Promise<string[]>;
  /** The name of a session's container. */
  containerName(sessionId: string): string;
}

/**
 * One hardened container per session, created lazily on the first command and reused, named
 * `<prefix><sessionId>` and labelled so a restarted server finds it again. File operations act
 * on the host workspace (bind-mounted at `/workspace`) through the same path rules as the local
 * backend; every Docker API call goes through a circuit breaker.
 */
export function createDockerSandbox(config: DockerSandboxConfig = {}): DockerSandboxFactory {
  const resolved = resolveDockerConfig(config);
  const docker = createDockerClient(resolved.connection);
  const breaker =
    config.circuitBreakers?.get(DOCKER_DEFAULTS.breakerName, {
      isFailure: isDockerEngineFailure,
    }) ?? new CircuitBreaker(DOCKER_DEFAULTS.breakerName, { isFailure: isDockerEngineFailure });
  const api = new DockerApi(docker, breaker, resolved.connection);
  const sessions = new LiveSessions();
  const containerName = (sessionId: string): string => `${resolved.containerPrefix}${sessionId}`;

  return {
    kind: 'docker',
    containerName,
    async forSession(sessionId, root) {
      validateSessionId(sessionId);
      await fs.mkdir(root, { recursive: true });
      const guard = await PathGuard.create({
        root,
        protectedPaths: resolved.protectedPaths,
        virtualRoot: resolved.workspacePath,
      });
      return sessions.track(
        sessionId,
        new DockerExecutionBackend(api, resolved, sessionId, containerName(sessionId), guard),
      );
    },
    async release(sessionId) {
      await sessions.terminate(sessionId);
      await api.remove(containerName(validateSessionId(sessionId)));
    },
    async reconcile(existingSessionIds) {
      const keep = new Set(existingSessionIds);
      const containers = await api.call(() =>
        docker.listContainers({ all: true, filters: { label: [`${MANAGED_LABEL}=true`] } }),
      );
      const removed: string[] = [];
      for (const container of containers) {
        const sessionId = container.Labels[SESSION_LABEL];
        if (sessionId === undefined || keep.has(sessionId)) continue;
        // Only this factory's naming scheme: another prefix is another deployment's container.
        if (!container.Names.includes(`/${containerName(sessionId)}`)) continue;
        await api.remove(container.Id);
        removed.push(sessionId);
      }
      return removed;
    },
  };
}

/** Every Docker API call goes through here: the breaker, and errors mapped to SandboxError. */
class DockerApi {
  constructor(
    readonly docker: Docker,
    private readonly breaker: CircuitBreaker,
    private readonly connection: DockerConnection,
  ) {}

  async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await this.breaker.execute(fn);
    } catch (error) {
      if (isCircuitOpenError(error)) {
        throw new SandboxError(
          'CIRCUIT_OPEN',
          `The Docker engine failed repeatedly; sandbox commands are paused (${error.message})`,
          { cause: error },
        );
      }
      if (error instanceof SandboxError) throw error;
      if (dockerStatus(error) === undefined) throw unavailable(this.connection, error);
      throw error;
    }
  }

  /** Force-removes a container; an already missing one is fine. */
  async remove(idOrName: string): Promise<void> {
    try {
      await this.call(() => this.docker.getContainer(idOrName).remove({ force: true, v: true }));
    } catch (error) {
      // 404: gone already; 409: removal already in progress.
      const status = dockerStatus(error);
      if (status !== 404 && status !== 409)
        throw toDockerError(error, `remove container ${idOrName}`);
    }
  }
}

class DockerExecutionBackend extends SessionBackend {
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

  /** Removes the session's container (running commands die with it). */
  protected async release(): Promise<void> {
    const hadContainer = this.container !== undefined;
    this.container = undefined;
    for (const stop of this.stops) stop();
    if (hadContainer) await this.api.remove(this.name);
  }

  /** Creates the exec, (re)creating the container once if it vanished meanwhile. */
  private async createExec(
    command: string,
    workingDir: string,
    env: Record<string, string>,
  ): Promise<{ exec: Docker.Exec; pidFile: string }> {
    const pidFile = `/tmp/.cognition-exec-${randomUUID()}.pid`;
    const create = async (): Promise<Docker.Exec> => {
      await this.restarting;
      const container = await this.ensureContainer();
      return this.api.call(() =>
        container.exec({
          Cmd: ['sh', '-c', EXEC_WRAPPER, 'cognition-exec', pidFile, command],
          AttachStdout: true,
          AttachStderr: true,
          Tty: false,
          WorkingDir: workingDir,
          Env: Object.entries(env).map(([key, value]) => `${key}=${value}`),
        }),
      );
    };
    try {
      return { exec: await create(), pidFile };
    } catch (error) {
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

      // TERM to the command's group, KILL after the grace, and if the stream still has not
      // ended, restart the container (workspace and container survive; /tmp and other
      // commands of the session do not).
      const stop = (): void => {
        if (stopping) return;
        stopping = true;
        const later = (ms: number, step: () => Promise<unknown>): void => {
          timers.push(
            setTimeout(() => {
              if (!settled) step().catch(() => undefined);
            }, ms),
          );
        };
        const pending = (): boolean => !settled;
        later(0, () => this.signalGroup(pidFile, 'TERM', pending));
        later(this.config.killGraceMs, () => this.signalGroup(pidFile, 'KILL', pending));
        later(this.config.killGraceMs + STREAM_END_GRACE_MS, async () => {
          await this.restartContainer();
          stream?.destroy();
        });
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
          .call(() => exec.inspect())
          .then(
            (info) => info.ExitCode ?? -1,
            () => -1,
          )
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
        .call(() => exec.start({ hijack: true, stdin: false }))
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

  /** Signals a command's process group from another exec; false if it never got in. */
  private async signalGroup(
    pidFile: string,
    signalName: 'TERM' | 'KILL',
    pending: () => boolean,
  ): Promise<boolean> {
    for (let attempt = 0; attempt < SIGNAL_ATTEMPTS && pending(); attempt += 1) {
      const container = await this.container;
      if (container === undefined) return false;
      const exitCode = await this.runQuiet(container, [
        'sh',
        '-c',
        SIGNAL_SCRIPT,
        'cognition-signal',
        pidFile,
        signalName,
      ]).catch(() => -1);
      if (exitCode === 0) return true;
      await new Promise((resolve) => setTimeout(resolve, SIGNAL_RETRY_MS));
    }
    return false;
  }

  /** Runs a housekeeping command in the container and returns its exit code. */
  private async runQuiet(container: Docker.Container, cmd: string[]): Promise<number> {
    const exec = await this.api.call(() =>
      container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true }),
    );
    const stream = await this.api.call(() => exec.start({ hijack: true, stdin: false }));
    await new Promise<void>((resolve) => {
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', () => resolve());
      stream.resume();
    });
    stream.destroy();
    const info = await this.api.call(() => exec.inspect());
    return info.ExitCode ?? -1;
  }

  /**
   * Kills every process of the container by restarting it (same container, same mounts). New
   * commands wait for the restart to finish.
   */
  private async restartContainer(): Promise<void> {
    const container = await this.container;
    if (container === undefined) return;
    const restarting = this.api.call(() => container.restart({ t: 0 })).then(() => undefined);
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
    const { docker } = this.api;
    const hostRoot = this.config.hostPathOf(this.root);
    await this.prepareWorkspace();
    const existing = docker.getContainer(this.name);
    let info: Docker.ContainerInspectInfo | undefined;
    try {
      info = await this.api.call(() => existing.inspect());
    } catch (error) {
      if (dockerStatus(error) !== 404) throw toDockerError(error, 'inspect the session container');
    }
    if (info && info.Config.Labels[ROOT_LABEL] !== hostRoot) {
      // Same session, different workspace directory: the old mount is stale.
      await this.api.remove(this.name);
      info = undefined;
    }
    if (info) {
      if (!info.State.Running) {
        try {
          await this.api.call(() => existing.start());
        } catch (error) {
          if (dockerStatus(error) !== 304)
            throw toDockerError(error, 'start the session container');
        }
      }
      return existing;
    }
    const created = await this.create(hostRoot).catch((error: unknown) => {
      // 409: another backend of the same session created it first.
      if (dockerStatus(error) !== 409) throw error;
      return existing;
    });
    try {
      await this.api.call(() => created.start());
    } catch (error) {
      if (dockerStatus(error) !== 304) throw toDockerError(error, 'start the session container');
    }
    return created;
  }

  private async create(hostRoot: string): Promise<Docker.Container> {
    const { docker } = this.api;
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
    const ownerOptions = config.owner ? `,uid=${config.owner.uid},gid=${config.owner.gid}` : '';
    try {
      return await this.api.call(() =>
        docker.createContainer({
          name: this.name,
          Image: config.image,
          Cmd: ['tail', '-f', '/dev/null'],
          User: config.user,
          WorkingDir: config.workspacePath,
          Env: [`HOME=/home`, `COGNITION_WORKSPACE=${config.workspacePath}`],
          Labels: {
            [MANAGED_LABEL]: 'true',
            [SESSION_LABEL]: this.sessionId,
            [ROOT_LABEL]: hostRoot,
          },
          HostConfig: {
            Init: true,
            CapDrop: ['ALL'],
            SecurityOpt: ['no-new-privileges'],
            ReadonlyRootfs: true,
            Tmpfs: {
              '/tmp': `rw,nosuid,nodev,noexec,size=${config.tmpSize}`,
              '/home': `rw,nosuid,nodev,size=${config.homeSize}${ownerOptions}`,
            },
            NetworkMode: config.network,
            Memory: config.memoryBytes,
            MemorySwap: config.memoryBytes,
            NanoCpus: config.nanoCpus,
            PidsLimit: config.pidsLimit,
            Mounts: mounts,
            RestartPolicy: { Name: 'no' },
          },
        }),
      );
    } catch (error) {
      const status = dockerStatus(error);
      if (status === 404) {
        throw new SandboxError(
          'IMAGE_NOT_FOUND',
          `Sandbox image ${config.image} does not exist on the Docker engine; build it with tools/sandbox/build-image.sh`,
          { cause: error },
        );
      }
      if (status === 409) throw error;
      throw toDockerError(error, 'create the session container');
    }
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

function toDockerError(error: unknown, action: string): SandboxError {
  if (error instanceof SandboxError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new SandboxError('DOCKER_ERROR', `Docker failed to ${action}: ${message}`, {
    cause: error,
  });
}

function resolveDockerConfig(config: DockerSandboxConfig): ResolvedDockerConfig {
  const common = resolveCommonConfig(config, 'docker');
  const cpus = config.cpus ?? DOCKER_DEFAULTS.cpus;
  if (!Number.isFinite(cpus) || cpus <= 0) {
    throw new SandboxError(
      'INVALID_ARGUMENT',
      `docker.cpus must be a positive number (got ${cpus})`,
    );
  }
  const { user, owner } = resolveUser(config.user);
  const workspacePath = path.posix.normalize(config.workspacePath ?? DOCKER_DEFAULTS.workspacePath);
  if (!path.posix.isAbsolute(workspacePath) || workspacePath === '/') {
    throw new SandboxError(
      'INVALID_ARGUMENT',
      'docker.workspacePath must be an absolute path other than /',
    );
  }
  return {
    ...common,
    connection: config.connection ?? { socketPath: DEFAULT_DOCKER_SOCKET },
    image: nonEmpty(config.image ?? DOCKER_DEFAULTS.image, 'docker.image'),
    network: nonEmpty(config.network ?? DOCKER_DEFAULTS.network, 'docker.network'),
    memoryBytes: parseByteSize(config.memory ?? DOCKER_DEFAULTS.memory, 'docker.memory'),
    nanoCpus: Math.round(cpus * 1e9),
    pidsLimit: positiveInteger(config.pidsLimit, 'docker.pidsLimit') ?? DOCKER_DEFAULTS.pidsLimit,
    user,
    owner,
    tmpSize: byteSizeOption(config.tmpSize ?? DOCKER_DEFAULTS.tmpSize, 'docker.tmpSize'),
    homeSize: byteSizeOption(config.homeSize ?? DOCKER_DEFAULTS.homeSize, 'docker.homeSize'),
    workspacePath,
    containerPrefix: config.containerPrefix ?? DOCKER_DEFAULTS.containerPrefix,
    hostPathOf: config.hostPathOf ?? ((root) => root),
  };
}

function resolveUser(user: string | undefined): { user: string; owner: FileOwner | undefined } {
  const serverUid = process.getuid?.();
  const serverGid = process.getgid?.();
  const value =
    user ??
    (serverUid !== undefined && serverUid !== 0
      ? `${serverUid}:${serverGid ?? serverUid}`
      : '1000:1000');
  const match = /^(\d+)(?::(\d+))?$/.exec(value);
  if (!match) {
    throw new SandboxError(
      'INVALID_ARGUMENT',
      `docker.user must be numeric uid[:gid] (got "${value}")`,
    );
  }
  const uid = Number(match[1]);
  const gid = Number(match[2] ?? match[1]);
  if (uid === 0) {
    throw new SandboxError('INVALID_ARGUMENT', 'docker.user must not be root (uid 0)');
  }
  // Only root can (and only then must) hand the workspace over to another uid.
  const owner = serverUid === 0 ? { uid, gid } : undefined;
  return { user: `${uid}:${gid}`, owner };
}

/** Parses Docker-style sizes: `512m`, `1g`, `65536k`, or plain bytes. */
export function parseByteSize(value: string, field: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([bkmg]?)b?$/i.exec(value.trim());
  const units: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };
  const unit = match ? units[(match[2] ?? '').toLowerCase()] : undefined;
  if (!match || unit === undefined) {
    throw new SandboxError(
      'INVALID_ARGUMENT',
      `${field} must be a size like 512m or 1g (got "${value}")`,
    );
  }
  const bytes = Math.floor(Number(match[1]) * unit);
  if (bytes <= 0) {
    throw new SandboxError('INVALID_ARGUMENT', `${field} must be greater than zero`);
  }
  return bytes;
}

function byteSizeOption(value: string, field: string): string {
  return String(parseByteSize(value, field));
}

function nonEmpty(value: string, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new SandboxError('INVALID_ARGUMENT', `${field} must be a non-empty string`);
  }
  return value;
}
