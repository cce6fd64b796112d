import { CircuitBreaker, isCircuitOpenError } from '@cognition/circuit-breaker';
import type { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import { SandboxError } from '@cognition/sandbox';
import type Docker from 'dockerode';
import type { Duplex } from 'node:stream';
import { DOCKER_DEFAULTS, MANAGED_LABEL } from '../docker-config';
import type { DockerConnection } from './connection';
import { DockerStreamDemuxer } from './demux';
import { createDockerClient, dockerStatus, isDockerEngineFailure, unavailable } from './connection';

/**
 * The Docker engine as the backend needs it; every dockerode call of the backend goes through
 * here, behind the circuit breaker: an engine that does not answer is `DOCKER_UNAVAILABLE`, an
 * open breaker `CIRCUIT_OPEN`. Answers a caller decides about itself (404, 409) are passed on as
 * the engine's error; the others become `DOCKER_ERROR` naming what failed.
 */
export class DockerApi {
  private readonly docker: Docker;
  private readonly breaker: CircuitBreaker;

  /** `circuitBreakers`: where the `docker` breaker lives (default: a breaker of its own). */
  constructor(
    private readonly connection: DockerConnection,
    circuitBreakers?: CircuitBreakerRegistry,
  ) {
    this.docker = createDockerClient(connection);
    this.breaker =
      circuitBreakers?.get(DOCKER_DEFAULTS.breakerName, { isFailure: isDockerEngineFailure }) ??
      new CircuitBreaker(DOCKER_DEFAULTS.breakerName, { isFailure: isDockerEngineFailure });
  }

  /** Every container this library manages (label `cognition.managed=true`), running or not. */
  listManaged(): Promise<Docker.ContainerInfo[]> {
    return this.call(() =>
      this.docker.listContainers({ all: true, filters: { label: [`${MANAGED_LABEL}=true`] } }),
    );
  }

  /** A handle on the container named `name` (no engine call). */
  container(name: string): Docker.Container {
    return this.docker.getContainer(name);
  }

  /** The container's state and configuration; undefined when it does not exist. */
  async inspect(container: Docker.Container): Promise<Docker.ContainerInspectInfo | undefined> {
    try {
      return await this.call(() => container.inspect());
    } catch (error) {
      if (dockerStatus(error) !== 404) throw toDockerError(error, 'inspect the session container');
      return undefined;
    }
  }

  /**
   * @throws SandboxError IMAGE_NOT_FOUND when the image is missing; the engine's error for a
   *   name already taken (409).
   */
  async create(options: Docker.ContainerCreateOptions): Promise<Docker.Container> {
    try {
      return await this.call(() => this.docker.createContainer(options));
    } catch (error) {
      const status = dockerStatus(error);
      if (status === 404) {
        throw new SandboxError(
          'IMAGE_NOT_FOUND',
          `Sandbox image ${options.Image ?? ''} does not exist on the Docker engine; build it with tools/sandbox/build-image.sh`,
          { cause: error },
        );
      }
      if (status === 409) throw error;
      throw toDockerError(error, 'create the session container');
    }
  }

  /** Starts the container; one already running (304) is fine. */
  async start(container: Docker.Container): Promise<void> {
    try {
      await this.call(() => container.start());
    } catch (error) {
      if (dockerStatus(error) !== 304) throw toDockerError(error, 'start the session container');
    }
  }

  /** Kills every process of the container by restarting it (same container, same mounts). */
  async restart(container: Docker.Container): Promise<void> {
    await this.call(() => container.restart({ t: 0 }));
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

  /** Creates an exec; the engine's error as is (the caller retries on 404/409). */
  exec(container: Docker.Container, options: Docker.ExecCreateOptions): Promise<Docker.Exec> {
    return this.call(() => container.exec(options));
  }

  /**
   * Starts an exec; its output is the multiplexed stream `DockerStreamDemuxer` splits. With
   * `stdin`, what is written to the stream is the process's stdin (ending it closes that).
   */
  startExec(exec: Docker.Exec, stdin = false): Promise<Duplex> {
    return this.call(() => exec.start({ hijack: true, stdin }));
  }

  /** The exit code of a finished exec; -1 when the engine does not know it. */
  async exitCode(exec: Docker.Exec): Promise<number> {
    const info = await this.call(() => exec.inspect());
    return info.ExitCode ?? -1;
  }

  /** Runs a housekeeping command in the container, discarding its output; its exit code. */
  async runQuiet(container: Docker.Container, cmd: string[]): Promise<number> {
    const exec = await this.call(() =>
      container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true }),
    );
    const stream = await this.startExec(exec);
    await new Promise<void>((resolve) => {
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', () => resolve());
      stream.resume();
    });
    stream.destroy();
    return this.exitCode(exec);
  }

  /** Runs a housekeeping command in the container; its exit code and its stdout. */
  async runCollect(
    container: Docker.Container,
    cmd: string[],
    options: Pick<Docker.ExecCreateOptions, 'WorkingDir' | 'Env'> = {},
  ): Promise<{ exitCode: number; stdout: string }> {
    const exec = await this.call(() =>
      container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, ...options }),
    );
    const stream = await this.startExec(exec);
    const chunks: Buffer[] = [];
    const demuxer = new DockerStreamDemuxer((payload, kind) => {
      if (kind === 'stdout') chunks.push(payload);
    });
    await new Promise<void>((resolve) => {
      stream.on('data', (chunk: Buffer) => demuxer.push(chunk));
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', () => resolve());
    });
    stream.destroy();
    return { exitCode: await this.exitCode(exec), stdout: Buffer.concat(chunks).toString('utf8') };
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
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
}

/** `DOCKER_ERROR` naming the action, unless `error` already is a SandboxError. */
export function toDockerError(error: unknown, action: string): SandboxError {
  if (error instanceof SandboxError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new SandboxError('DOCKER_ERROR', `Docker failed to ${action}: ${message}`, {
    cause: error,
  });
}
