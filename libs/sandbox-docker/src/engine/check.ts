import { SandboxError } from '@cognition/sandbox';
import { DOCKER_DEFAULTS } from '../docker-config';
import type { DockerConnection } from './connection';
import { createDockerClient, DEFAULT_DOCKER_SOCKET, dockerStatus, unavailable } from './connection';

/** What `checkDockerAvailable` found. */
export interface DockerAvailability {
  serverVersion: string;
  apiVersion: string;
  image: string;
}

/**
 * Startup check for the docker backend: the engine answers and the sandbox image exists. The
 * server calls it when the docker backend is selected, so a missing engine fails fast with a
 * message naming the socket / DOCKER_HOST tried, instead of on the first agent command.
 * @throws SandboxError DOCKER_UNAVAILABLE (engine unreachable within `timeoutMs`, default 5 s),
 *   IMAGE_NOT_FOUND (image missing).
 */
export async function checkDockerAvailable(
  options: { connection?: DockerConnection; image?: string; timeoutMs?: number } = {},
): Promise<DockerAvailability> {
  const connection = options.connection ?? { socketPath: DEFAULT_DOCKER_SOCKET };
  const image = options.image ?? DOCKER_DEFAULTS.image;
  const docker = createDockerClient(connection, options.timeoutMs ?? 5_000);
  let version: { Version: string; ApiVersion: string };
  try {
    version = await docker.version();
  } catch (error) {
    throw unavailable(connection, error);
  }
  try {
    await docker.getImage(image).inspect();
  } catch (error) {
    if (dockerStatus(error) === 404) {
      throw new SandboxError(
        'IMAGE_NOT_FOUND',
        `Sandbox image ${image} does not exist on the Docker engine at ${connection.socketPath ?? connection.host ?? ''}; build it with tools/sandbox/build-image.sh`,
        { cause: error },
      );
    }
    throw unavailable(connection, error);
  }
  return { serverVersion: version.Version, apiVersion: version.ApiVersion, image };
}
