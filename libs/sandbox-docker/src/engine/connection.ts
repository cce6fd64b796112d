import { SandboxError } from '@cognition/sandbox';
import Docker from 'dockerode';

/** The socket Docker listens on by default on Linux. */
export const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';

/**
 * Where the Docker engine is. Exactly one of `socketPath` or `host` is used (default: the
 * socket `/var/run/docker.sock`). The library never reads `DOCKER_HOST` itself; the server can
 * use `dockerConnectionFromEnv` to map it.
 */
export interface DockerConnection {
  socketPath?: string;
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
  ca?: string;
  cert?: string;
  key?: string;
}

/**
 * Maps Docker's conventional variables (`DOCKER_HOST` as `unix:///path` or `tcp://host:port`,
 * `DOCKER_TLS_VERIFY`, and PEM contents the caller read from `DOCKER_CERT_PATH`) to a
 * `DockerConnection`.
 * @throws SandboxError INVALID_ARGUMENT for a `DOCKER_HOST` that is neither unix:// nor tcp://.
 */
export function dockerConnectionFromEnv(env: {
  DOCKER_HOST?: string;
  DOCKER_TLS_VERIFY?: string;
}): DockerConnection {
  const raw = env.DOCKER_HOST?.trim();
  if (!raw) return { socketPath: DEFAULT_DOCKER_SOCKET };
  if (raw.startsWith('unix://'))
    return { socketPath: raw.slice('unix://'.length) || DEFAULT_DOCKER_SOCKET };
  if (raw.startsWith('tcp://') || raw.startsWith('http://') || raw.startsWith('https://')) {
    const url = new URL(raw.replace(/^tcp:/, 'http:'));
    const tls = env.DOCKER_TLS_VERIFY === '1' || url.protocol === 'https:' || url.port === '2376';
    return {
      host: url.hostname,
      port: url.port ? Number(url.port) : tls ? 2376 : 2375,
      protocol: tls ? 'https' : 'http',
    };
  }
  throw new SandboxError(
    'INVALID_ARGUMENT',
    `DOCKER_HOST "${raw}" must look like unix:///var/run/docker.sock or tcp://host:2375`,
  );
}

/** A human-readable name of the endpoint, for error messages. */
export function describeConnection(connection: DockerConnection): string {
  if (connection.host !== undefined) {
    return `${connection.protocol ?? 'http'}://${connection.host}:${connection.port ?? 2375} (DOCKER_HOST)`;
  }
  return `unix://${connection.socketPath ?? DEFAULT_DOCKER_SOCKET} (socket)`;
}

export function createDockerClient(connection: DockerConnection, timeoutMs?: number): Docker {
  if (connection.host !== undefined) {
    return new Docker({
      host: connection.host,
      port: connection.port ?? 2375,
      protocol: connection.protocol ?? 'http',
      ca: connection.ca,
      cert: connection.cert,
      key: connection.key,
      timeout: timeoutMs,
    });
  }
  return new Docker({
    socketPath: connection.socketPath ?? DEFAULT_DOCKER_SOCKET,
    timeout: timeoutMs,
  });
}

/** The HTTP status of a Docker API error, if the engine answered at all. */
export function dockerStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/**
 * Whether an error means the engine itself is failing (unreachable, timing out, 5xx), as opposed
 * to a request it answered and refused (404, 409...). Only the former trips the circuit breaker.
 */
export function isDockerEngineFailure(error: unknown): boolean {
  const status = dockerStatus(error);
  return status === undefined || status >= 500;
}

/** The `DOCKER_UNAVAILABLE` error for an engine that did not answer. */
export function unavailable(connection: DockerConnection, error: unknown): SandboxError {
  const reason = error instanceof Error ? error.message : String(error);
  return new SandboxError(
    'DOCKER_UNAVAILABLE',
    `Docker engine not reachable at ${describeConnection(connection)}: ${reason}. ` +
      'Start dockerd (tools/provision/ensure-docker.sh) or point DOCKER_HOST at a running engine.',
    { cause: error },
  );
}
