import type { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import type { ExecutionBackendFactory } from '@cognition/sandbox';
import type { DockerConnection, dockerConnectionFromEnv } from '@cognition/sandbox-docker';
import { createLocalSandbox } from '@cognition/sandbox-local';
import type { StorageBackend } from '@cognition/storage';
import { PAGE_LIMIT_MAX } from '@cognition/contracts';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { SandboxConfig } from '../config';

/** Where the Docker engine is, from `DOCKER_HOST` / `DOCKER_TLS_VERIFY` / `DOCKER_CERT_PATH`. */
async function dockerConnection(
  docker: SandboxConfig['docker'],
  fromEnv: typeof dockerConnectionFromEnv,
): Promise<DockerConnection> {
  const connection = fromEnv({
    ...(docker.dockerHost !== null ? { DOCKER_HOST: docker.dockerHost } : {}),
    DOCKER_TLS_VERIFY: docker.tlsVerify ? '1' : '0',
  });
  if (connection.protocol !== 'https' || docker.certPath === null) return connection;
  const pem = (name: string) => readFile(path.join(docker.certPath ?? '', name), 'utf8');
  const [ca, cert, key] = await Promise.all([pem('ca.pem'), pem('cert.pem'), pem('key.pem')]);
  return { ...connection, ca, cert, key };
}

/** Every session id in storage, whatever its scope (the empty scope sees everything). */
async function allSessionIds(storage: StorageBackend): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += PAGE_LIMIT_MAX) {
    const page = await storage.sessions.list({ limit: PAGE_LIMIT_MAX, offset }, {});
    ids.push(...page.sessions.map((session) => session.id));
    if (page.sessions.length < PAGE_LIMIT_MAX) return ids;
  }
}

/**
 * The sandbox implementation chosen by `COGNITION_SANDBOX_BACKEND`. For docker the engine and
 * image are checked first (startup fails with the library's message naming the socket or
 * `DOCKER_HOST` tried), then containers of sessions that no longer exist are removed. The
 * Docker breaker lives in the shared registry so `/health` reports it.
 */
export async function createSandbox(
  config: SandboxConfig,
  deps: {
    storage: StorageBackend;
    breakers: CircuitBreakerRegistry;
    logger: Logger;
    /** Where the local backend records running commands, for recovery to end after a crash. */
    stateDir?: string;
  },
): Promise<ExecutionBackendFactory> {
  switch (config.backend) {
    case 'local':
      return createLocalSandbox(deps.stateDir === undefined ? {} : { stateDir: deps.stateDir });
    case 'docker': {
      const { docker } = config;
      // Loaded only for this backend: the Docker client is a large module graph that a server on
      // the local sandbox would otherwise load at every start.
      const { checkDockerAvailable, createDockerSandbox, dockerConnectionFromEnv } =
        await import('@cognition/sandbox-docker');
      const connection = await dockerConnection(docker, dockerConnectionFromEnv);
      const found = await checkDockerAvailable({ connection, image: docker.image });
      const factory = createDockerSandbox({
        connection,
        image: docker.image,
        network: docker.network,
        memory: docker.memoryLimit,
        cpus: docker.cpuLimit,
        timeoutMs: Math.round(docker.timeoutSeconds * 1000),
        circuitBreakers: deps.breakers,
      });
      const removed = await factory.reconcile(await allSessionIds(deps.storage));
      deps.logger.info(
        { engine: found.serverVersion, image: found.image, removedContainers: removed.length },
        `Docker sandbox ready (engine ${found.serverVersion}, image ${found.image}); removed ${removed.length} container(s) of deleted sessions`,
      );
      return factory;
    }
  }
}
