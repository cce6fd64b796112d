export { createDockerSandbox } from './backend/docker-sandbox';
export type { DockerSandboxFactory } from './backend/docker-sandbox';
export { DOCKER_DEFAULTS, MANAGED_LABEL, SESSION_LABEL, parseByteSize } from './docker-config';
export type { DockerSandboxConfig } from './docker-config';
export {
  DEFAULT_DOCKER_SOCKET,
  describeConnection,
  dockerConnectionFromEnv,
  isDockerEngineFailure,
} from './engine/connection';
export type { DockerConnection } from './engine/connection';
export { checkDockerAvailable } from './engine/check';
export type { DockerAvailability } from './engine/check';
