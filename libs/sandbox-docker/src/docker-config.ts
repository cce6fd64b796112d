import type { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import { positiveInteger, resolveCommonConfig, SandboxError } from '@cognition/sandbox';
import type { CommonSandboxConfig, FileOwner, ResolvedCommonConfig } from '@cognition/sandbox';
import type Docker from 'dockerode';
import path from 'node:path';
import type { DockerConnection } from './engine/connection';
import { DEFAULT_DOCKER_SOCKET } from './engine/connection';

/** Labels that mark the containers this library manages (found again after a restart). */
export const MANAGED_LABEL = 'cognition.managed';
export const SESSION_LABEL = 'cognition.session';
export const ROOT_LABEL = 'cognition.root';

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

export interface ResolvedDockerConfig extends ResolvedCommonConfig {
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

/** @throws SandboxError INVALID_ARGUMENT naming the first invalid field. */
export function resolveDockerConfig(config: DockerSandboxConfig): ResolvedDockerConfig {
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

/**
 * The hardened container of one session: no capabilities, no privilege escalation, read-only
 * root, small tmpfs for /tmp and /home, the configured network and limits, the workspace (and
 * the read-only protected paths in `mounts`) bind-mounted, labelled so a restarted server finds
 * it again.
 */
export function sessionContainerOptions(
  config: ResolvedDockerConfig,
  session: { name: string; sessionId: string; hostRoot: string; mounts: Docker.MountSettings[] },
): Docker.ContainerCreateOptions {
  const ownerOptions = config.owner ? `,uid=${config.owner.uid},gid=${config.owner.gid}` : '';
  return {
    name: session.name,
    Image: config.image,
    Cmd: ['tail', '-f', '/dev/null'],
    User: config.user,
    WorkingDir: config.workspacePath,
    Env: [`HOME=/home`, `COGNITION_WORKSPACE=${config.workspacePath}`],
    Labels: {
      [MANAGED_LABEL]: 'true',
      [SESSION_LABEL]: session.sessionId,
      [ROOT_LABEL]: session.hostRoot,
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
      Mounts: session.mounts,
      RestartPolicy: { Name: 'no' },
    },
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
